#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace swarmlab::sim {
namespace {

TEST(Engine, RunsEventsInTimeOrder) {
  Engine e;
  std::vector<int> order;
  e.at(3.0, [&] { order.push_back(3); });
  e.at(1.0, [&] { order.push_back(1); });
  e.at(2.0, [&] { order.push_back(2); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(e.now(), 3.0);
  EXPECT_EQ(e.events_processed(), 3u);
}

TEST(Engine, TiesRunInSchedulingOrder) {
  Engine e;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) e.at(5.0, [&order, i] { order.push_back(i); });
  e.run();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(Engine, EventsScheduledDuringAnEventAtTheSameInstantRunAfterIt) {
  Engine e;
  std::vector<std::string> order;
  e.at(1.0, [&] {
    order.push_back("a");
    e.after(0.0, [&] { order.push_back("c"); });
  });
  e.at(1.0, [&] { order.push_back("b"); });
  e.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Engine, CancelledEventsDoNotRun) {
  Engine e;
  int ran = 0;
  auto id = e.at(1.0, [&] { ++ran; });
  e.at(2.0, [&] { ++ran; });
  e.cancel(id);
  e.cancel(id);      // twice is harmless
  e.cancel(12345);   // unknown is harmless
  EXPECT_EQ(e.pending(), 1u);
  e.run();
  EXPECT_EQ(ran, 1);
}

TEST(Engine, StaleIdCannotCancelAReusedSlot) {
  Engine e;
  int ran = 0;
  auto first = e.at(1.0, [&] { ++ran; });
  e.run();
  e.at(2.0, [&] { ++ran; });  // reuses the slot of `first`
  e.cancel(first);
  e.run();
  EXPECT_EQ(ran, 2);
}

TEST(Engine, PastTimesAreClampedToNow) {
  Engine e;
  e.at(5.0, [] {});
  e.run();
  Seconds when = -1;
  e.at(1.0, [&] { when = e.now(); });
  e.run();
  EXPECT_DOUBLE_EQ(when, 5.0);
}

TEST(Engine, RunUntilStopsAtTheBoundaryAndAdvancesTheClock) {
  Engine e;
  int ran = 0;
  e.at(1.0, [&] { ++ran; });
  e.at(2.0, [&] { ++ran; });
  e.at(3.0, [&] { ++ran; });
  e.run_until(2.0);
  EXPECT_EQ(ran, 2);
  EXPECT_DOUBLE_EQ(e.now(), 2.0);
  e.run_until(10.0);
  EXPECT_EQ(ran, 3);
  EXPECT_DOUBLE_EQ(e.now(), 10.0);
}

TEST(Engine, StopEndsRunAfterTheCurrentEvent) {
  Engine e;
  int ran = 0;
  e.at(1.0, [&] { ++ran; e.stop(); });
  e.at(2.0, [&] { ++ran; });
  e.run();
  EXPECT_EQ(ran, 1);
  e.run();
  EXPECT_EQ(ran, 2);
}

// Same schedule, same outcome: a pseudo-random workload replayed twice gives the same trace.
TEST(Engine, IsDeterministic) {
  auto replay = [] {
    Engine e;
    std::vector<std::pair<double, int>> log;
    std::uint64_t x = 42;
    std::function<void(int)> spawn = [&](int depth) {
      log.emplace_back(e.now(), depth);
      if (depth == 0) return;
      for (int k = 0; k < 3; ++k) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const double delay = static_cast<double>(x >> 40) / 1e6;
        e.after((x & 1) ? 0.0 : delay, [&spawn, depth] { spawn(depth - 1); });
      }
    };
    e.at(0, [&] { spawn(6); });
    e.run();
    return log;
  };
  EXPECT_EQ(replay(), replay());
}

TEST(Engine, ManySameTimeEventsRunInSchedulingOrder) {
  Engine e;
  std::vector<int> order;
  const int n = 100'000;
  // Interleave two instants so the heap mixes them; each instant's events keep their order.
  for (int i = 0; i < n; ++i) e.at(i % 2 ? 2.0 : 1.0, [&order, i] { order.push_back(i); });
  e.run();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  for (int k = 0; k < n / 2; ++k) {
    EXPECT_EQ(order[k], 2 * k);
    EXPECT_EQ(order[n / 2 + k], 2 * k + 1);
  }
}

TEST(Engine, NegativeZeroIsZero) {
  Engine e;
  std::vector<int> order;
  e.at(0.0, [&] { order.push_back(1); });
  e.at(-0.0, [&] { order.push_back(2); });
  e.at(0.0, [&] { order.push_back(3); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(Engine, CancelStormKeepsTheSurvivorsInOrder) {
  Engine e;
  std::vector<int> order;
  std::vector<Engine::EventId> ids;
  const int n = 50'000;
  for (int i = 0; i < n; ++i) ids.push_back(e.at(static_cast<double>(i % 97), [&order, i] { order.push_back(i); }));
  for (int i = 0; i < n; ++i)
    if (i % 3 != 0) e.cancel(ids[i]);  // enough to trigger compactions
  EXPECT_EQ(e.pending(), static_cast<std::size_t>((n + 2) / 3));
  // Stale ids of cancelled events are harmless, also after their slots were reused.
  for (int i = 0; i < 100; ++i) e.at(1000.0, [&order] { order.push_back(-1); });
  for (int i = 0; i < n; ++i)
    if (i % 3 != 0) e.cancel(ids[i]);
  e.run();
  std::vector<int> expected;
  for (int t = 0; t < 97; ++t)
    for (int i = t; i < n; i += 97)
      if (i % 3 == 0) expected.push_back(i);
  expected.insert(expected.end(), 100, -1);
  EXPECT_EQ(order, expected);
}

TEST(Engine, CancelDuringRunAndOfTheRunningEvent) {
  Engine e;
  std::vector<int> order;
  Engine::EventId self = 0, later = 0;
  self = e.at(1.0, [&] {
    order.push_back(1);
    e.cancel(self);   // already running: ignored
    e.cancel(later);  // pending: never runs
    e.after(0.5, [&] { order.push_back(3); });
  });
  later = e.at(1.0, [&] { order.push_back(2); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  EXPECT_EQ(e.events_processed(), 2u);
}

TEST(Engine, CallbacksAreReleasedWhenRunCancelledOrLeftPending) {
  auto token = std::make_shared<int>(0);
  {
    Engine e;
    const auto a = e.at(1.0, [token] {});
    e.at(2.0, [token] {});
    e.at(3.0, [token, pad = std::string(200, 'x')] {});  // too big to store inline
    EXPECT_EQ(token.use_count(), 4);
    e.cancel(a);
    EXPECT_EQ(token.use_count(), 3);
    e.run_until(2.5);
    EXPECT_EQ(token.use_count(), 2);
  }
  EXPECT_EQ(token.use_count(), 1);  // the engine's destructor released the pending one
}

TEST(Engine, AcceptsMoveOnlyAndLargeCallables) {
  Engine e;
  int sum = 0;
  auto owned = std::make_unique<int>(5);
  e.at(1.0, [&sum, p = std::move(owned)] { sum += *p; });
  std::array<std::uint64_t, 16> big{};
  big[15] = 7;
  e.at(2.0, [&sum, big] { sum += static_cast<int>(big[15]); });
  std::function<void()> f = [&sum] { sum += 100; };
  e.at(3.0, f);
  e.run();
  EXPECT_EQ(sum, 112);
}

TEST(Engine, AnExceptionLeavesTheEngineUsable) {
  Engine e;
  int ran = 0;
  e.at(1.0, [] { throw std::runtime_error("boom"); });
  e.at(2.0, [&] { ++ran; });
  EXPECT_THROW(e.run(), std::runtime_error);
  EXPECT_EQ(e.pending(), 1u);
  e.run();
  EXPECT_EQ(ran, 1);
  EXPECT_DOUBLE_EQ(e.now(), 2.0);
}

}  // namespace

// Lowers the engine's insertion-number limit so that renumbering happens within a test.
struct EngineTestAccess {
  static void set_seq_limit(Engine& e, std::uint32_t limit) { e.seq_limit_ = limit; }
};

namespace {

// The obvious scheduler: an ordered set of (time, insertion number), cancel by erasing. The engine
// must run exactly the same events in exactly the same order.
class ReferenceScheduler {
 public:
  using Id = std::uint64_t;
  double now() const { return now_; }
  Id at(double t, std::function<void()> fn) {
    const Id id = next_++;
    const double when = std::max(t, now_);
    queue_.emplace(when, id);
    fns_.emplace(id, std::make_pair(when, std::move(fn)));
    return id;
  }
  std::size_t pending() const { return queue_.size(); }
  void cancel(Id id) {
    auto it = fns_.find(id);
    if (it == fns_.end()) return;
    queue_.erase({it->second.first, id});
    fns_.erase(it);
  }
  void run() {
    while (!queue_.empty()) {
      const auto [t, id] = *queue_.begin();
      queue_.erase(queue_.begin());
      auto fn = std::move(fns_.at(id).second);
      fns_.erase(id);
      now_ = t;
      fn();
    }
  }

 private:
  std::set<std::pair<double, Id>> queue_;
  std::map<Id, std::pair<double, std::function<void()>>> fns_;
  Id next_ = 0;
  double now_ = 0;
};

// A random workload: events spawn events (often at the same instant, times on a coarse grid so
// that ties abound) and cancel random pending ones. Returns the log of (time, event number).
template <typename Scheduler, typename Cancel>
std::vector<std::pair<double, std::uint64_t>> random_workload(Scheduler& s, Cancel cancel, std::uint64_t events,
                                                              std::size_t population, std::uint64_t seed) {
  std::vector<std::pair<double, std::uint64_t>> log;
  std::vector<decltype(s.at(0.0, [] {}))> live;  // ids of possibly pending events
  std::uint64_t x = seed, made = 0;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  std::function<void(std::uint64_t)> fire = [&](std::uint64_t number) {
    log.emplace_back(s.now(), number);
    // The pending population hovers around `population`.
    const std::uint64_t children = s.pending() < population ? 1 + next() % 3 : next() % 2;
    for (std::uint64_t k = 0; k < children && made < events; ++k) {
      const std::uint64_t r = next();
      const double delay = r % 4 == 0 ? 0.0 : static_cast<double>(r % 64) * 0.25;
      const std::uint64_t n = made++;
      live.push_back(s.at(s.now() + delay, [&fire, n] { fire(n); }));
    }
    if (!live.empty() && next() % 4 == 0) {
      const std::size_t victim = next() % live.size();
      cancel(live[victim]);  // may be fired already: a no-op then
      live[victim] = live.back();
      live.pop_back();
    }
    if (live.size() > 4096) live.erase(live.begin(), live.begin() + 2048);
  };
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t n = made++;
    live.push_back(s.at(static_cast<double>(i % 7), [&fire, n] { fire(n); }));
  }
  s.run();
  return log;
}

TEST(Engine, MillionEventsMatchAReferenceScheduler) {
  ReferenceScheduler ref;
  const auto expected = random_workload(ref, [&ref](std::uint64_t id) { ref.cancel(id); }, 1'000'000, 5'000, 7);
  Engine e;
  const auto got = random_workload(e, [&e](Engine::EventId id) { e.cancel(id); }, 1'000'000, 5'000, 7);
  ASSERT_GT(expected.size(), 700'000u);
  EXPECT_EQ(got, expected);
}

TEST(Engine, RenumberingInsertionNumbersKeepsTheOrder) {
  ReferenceScheduler ref;
  const auto expected = random_workload(ref, [&ref](std::uint64_t id) { ref.cancel(id); }, 200'000, 2'000, 11);
  Engine e;
  EngineTestAccess::set_seq_limit(e, 20'000);  // renumbers every few thousand insertions
  const auto got = random_workload(e, [&e](Engine::EventId id) { e.cancel(id); }, 200'000, 2'000, 11);
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace swarmlab::sim
