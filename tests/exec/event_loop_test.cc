#include "exec/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace swarmlab::exec {
namespace {

TEST(EventLoop, TimersRunInDeadlineThenSchedulingOrder) {
  EventLoop loop;
  std::vector<int> order;
  loop.schedule(0.02, [&] { order.push_back(3); });
  loop.schedule(0.0, [&] { order.push_back(1); });
  loop.schedule(0.0, [&] { order.push_back(2); });
  EXPECT_TRUE(loop.run_until([&] { return order.size() == 3; }, 2));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(EventLoop, TimersFireNoEarlierThanAsked) {
  EventLoop loop;
  const double start = loop.now();
  double fired = -1;
  loop.schedule(0.05, [&] { fired = loop.now(); });
  EXPECT_TRUE(loop.run_until([&] { return fired >= 0; }, 2));
  EXPECT_GE(fired - start, 0.05);
}

TEST(EventLoop, DeadlinesRunNoEarlierAndPastOnesOnTheNextTurn) {
  EventLoop loop;
  const double due = loop.now() + 0.05;
  double fired = -1;
  loop.schedule_at(due, [&] { fired = loop.now(); });
  EXPECT_TRUE(loop.run_until([&] { return fired >= 0; }, 2));
  EXPECT_GE(fired, due);
  // From inside a timer, a deadline already past waits for the next pass (as a zero delay does),
  // after the timers that pass had already taken.
  std::vector<int> order;
  loop.schedule(0, [&] {
    order.push_back(1);
    loop.schedule_at(loop.now() - 10, [&] { order.push_back(3); });
  });
  loop.schedule(0, [&] { order.push_back(2); });
  EXPECT_TRUE(loop.run_until([&] { return order.size() == 3; }, 2));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_THROW(loop.schedule_at(std::nan(""), [] {}), std::invalid_argument);
}

TEST(EventLoop, CancelledTimersNeverRun) {
  EventLoop loop;
  bool ran = false, later = false;
  const auto id = loop.schedule(0.01, [&] { ran = true; });
  loop.schedule(0.03, [&] { later = true; });
  loop.cancel(id);
  loop.cancel(id);      // twice: harmless
  loop.cancel(424242);  // unknown: harmless
  EXPECT_TRUE(loop.run_until([&] { return later; }, 2));
  EXPECT_FALSE(ran);
}

TEST(EventLoop, PostFromAnotherThreadWakesTheLoop) {
  EventLoop loop;
  std::atomic<int> count{0};
  std::thread t([&] {
    for (int i = 0; i < 100; ++i) loop.post([&] { ++count; });
  });
  EXPECT_TRUE(loop.run_until([&] { return count.load() == 100; }, 5));
  t.join();
}

TEST(EventLoop, WatchesAFileDescriptorAndStopsWhenUnwatched) {
  EventLoop loop;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int reads = 0;
  EventLoop::WatchId id = 0;
  id = loop.watch(fds[0], EPOLLIN, [&](std::uint32_t) {
    char c;
    ASSERT_EQ(read(fds[0], &c, 1), 1);
    if (++reads == 2) loop.unwatch(id);  // removing itself from inside its callback
  });
  ASSERT_EQ(write(fds[1], "ab", 2), 2);
  EXPECT_TRUE(loop.run_until([&] { return reads == 2; }, 2));
  ASSERT_EQ(write(fds[1], "c", 1), 1);
  loop.run_until([] { return false; }, 0.05);
  EXPECT_EQ(reads, 2);
  close(fds[0]);
  close(fds[1]);
}

TEST(EventLoop, SharedOriginGivesOneTimeline) {
  const double origin = EventLoop::monotonic_seconds() - 10;
  EventLoop a(origin), b(origin);
  EXPECT_NEAR(a.now(), b.now(), 0.01);
  EXPECT_GE(a.now(), 10);
}

}  // namespace
}  // namespace swarmlab::exec
