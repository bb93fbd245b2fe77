#include "sim/engine.h"

#include <gtest/gtest.h>

#include <string>
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

}  // namespace
}  // namespace swarmlab::sim
