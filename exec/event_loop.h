#pragma once
// A single-threaded epoll event loop with monotonic timers: the one thread on which a live peer's
// protocol callbacks run (core/env.h: single-threaded callbacks). Other threads (compute workers)
// hand work to it with post(), the only thread-safe member.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace swarmlab::exec {

class EventLoop {
 public:
  using Callback = std::function<void()>;
  using IoCallback = std::function<void(std::uint32_t events)>;  // EPOLLIN, EPOLLOUT, ...
  using TimerId = std::uint64_t;
  using WatchId = std::uint64_t;

  // `origin` is the CLOCK_MONOTONIC reading (seconds) that now() counts from; by default the
  // moment of construction. Processes given the same origin share one timeline.
  explicit EventLoop(double origin = -1);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // CLOCK_MONOTONIC in seconds: system-wide, so comparable across processes on one host (and
  // across network namespaces).
  static double monotonic_seconds();
  // Wall-clock Unix time in seconds: what tokens and envelopes carry (docs/trust.md).
  static double unix_seconds();
  double origin() const { return origin_; }
  double now() const { return monotonic_seconds() - origin_; }

  // Runs `fn` on the loop after `delay` seconds (>= 0). Equal deadlines run in scheduling order.
  TimerId schedule(double delay, Callback fn);
  // Runs `fn` on the loop at now() == `deadline`; a deadline already past runs on the next turn.
  TimerId schedule_at(double deadline, Callback fn);
  // Cancelling a fired or unknown timer does nothing.
  void cancel(TimerId id);

  // Thread-safe: runs `fn` on the loop thread soon.
  void post(Callback fn);

  // Watches `fd` (not owned) for `events`; level-triggered. The callback may remove any watch,
  // including its own; events already collected for a removed watch are discarded.
  WatchId watch(int fd, std::uint32_t events, IoCallback fn);
  void modify(WatchId id, std::uint32_t events);
  void unwatch(WatchId id);

  // Runs until stop(). stop() may be called from a callback (or posted from another thread).
  void run();
  void stop() { stopping_ = true; }
  // Runs until `done()` holds (checked after every turn) or `timeout` seconds pass; returns done().
  bool run_until(const std::function<bool()>& done, double timeout);

  // One turn without waiting: ready I/O, posted work and due timers. With fd() it lets one thread
  // drive several loops (tests that host many peers, each on its own loop, in one thread).
  void poll();
  // Readable while this loop has work ready (it is the loop's epoll descriptor), including its
  // next timer once poll() or a turn has armed it.
  int fd() const { return epoll_fd_; }

  std::size_t pending_timers() const { return timers_.size(); }

 private:
  struct Watch {
    int fd;
    std::shared_ptr<IoCallback> fn;  // shared: a callback may unwatch itself while running
  };
  void turn(int max_wait_ms);
  void arm_timerfd();
  void run_due_timers();
  void drain_posted();

  double origin_;
  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  int wake_fd_ = -1;
  bool stopping_ = false;
  TimerId next_timer_ = 1;
  WatchId next_watch_ = 16;  // ids below are reserved for the loop's own fds
  std::map<std::pair<double, TimerId>, Callback> timers_;
  std::unordered_map<TimerId, double> timer_deadline_;
  double armed_deadline_ = -1;
  std::unordered_map<WatchId, Watch> watches_;
  std::mutex posted_mutex_;
  std::vector<Callback> posted_;
};

}  // namespace swarmlab::exec
