#include "exec/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

namespace swarmlab::exec {
namespace {

constexpr std::uint64_t kTimerWatch = 1;
constexpr std::uint64_t kWakeWatch = 2;

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string("event loop: ") + what + ": " + std::strerror(errno)); }

}  // namespace

double EventLoop::monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double EventLoop::unix_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

EventLoop::EventLoop(double origin) : origin_(origin >= 0 ? origin : monotonic_seconds()) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) fail("epoll_create1");
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) fail("timerfd_create");
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) fail("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kTimerWatch;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) != 0) fail("epoll_ctl(timerfd)");
  ev.data.u64 = kWakeWatch;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) fail("epoll_ctl(eventfd)");
}

EventLoop::~EventLoop() {
  if (wake_fd_ >= 0) close(wake_fd_);
  if (timer_fd_ >= 0) close(timer_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

EventLoop::TimerId EventLoop::schedule(double delay, Callback fn) {
  if (!(delay >= 0)) throw std::invalid_argument("schedule: delay must be >= 0");
  return schedule_at(now() + delay, std::move(fn));
}

EventLoop::TimerId EventLoop::schedule_at(double deadline, Callback fn) {
  if (std::isnan(deadline)) throw std::invalid_argument("schedule_at: deadline is not a number");
  // Never before now: run_due_timers only takes timers due when its pass began, so a past
  // deadline waits for the next turn as a zero delay does.
  deadline = std::max(deadline, now());
  const TimerId id = next_timer_++;
  timers_.emplace(std::make_pair(deadline, id), std::move(fn));
  timer_deadline_.emplace(id, deadline);
  return id;
}

void EventLoop::cancel(TimerId id) {
  auto it = timer_deadline_.find(id);
  if (it == timer_deadline_.end()) return;
  timers_.erase({it->second, id});
  timer_deadline_.erase(it);
}

void EventLoop::post(Callback fn) {
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    posted_.push_back(std::move(fn));
  }
  const std::uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable, so the wake-up is not lost.
  [[maybe_unused]] const ssize_t w = write(wake_fd_, &one, sizeof one);
}

EventLoop::WatchId EventLoop::watch(int fd, std::uint32_t events, IoCallback fn) {
  const WatchId id = next_watch_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl(ADD)");
  watches_.emplace(id, Watch{fd, std::make_shared<IoCallback>(std::move(fn))});
  return id;
}

void EventLoop::modify(WatchId id, std::uint32_t events) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->second.fd, &ev) != 0) fail("epoll_ctl(MOD)");
}

void EventLoop::unwatch(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  watches_.erase(it);
}

void EventLoop::arm_timerfd() {
  const double deadline = timers_.empty() ? -1 : timers_.begin()->first.first;
  if (deadline == armed_deadline_) return;
  armed_deadline_ = deadline;
  itimerspec spec{};
  if (deadline >= 0) {
    // Absolute CLOCK_MONOTONIC time; a deadline already past fires at once (never 0 = disarm).
    const double abs = std::max(deadline + origin_, 1e-9);
    spec.it_value.tv_sec = static_cast<time_t>(std::floor(abs));
    spec.it_value.tv_nsec = static_cast<long>((abs - std::floor(abs)) * 1e9);
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void EventLoop::run_due_timers() {
  // Only timers due when this pass began: a timer scheduled with delay 0 from inside a timer runs
  // on the next turn, after pending I/O, so timers cannot starve sockets.
  const double t = now();
  while (!timers_.empty() && timers_.begin()->first.first <= t && !stopping_) {
    auto node = timers_.extract(timers_.begin());
    timer_deadline_.erase(node.key().second);
    node.mapped()();
  }
}

void EventLoop::drain_posted() {
  std::vector<Callback> batch;
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

void EventLoop::turn(int max_wait_ms) {
  arm_timerfd();
  epoll_event events[64];
  const int n = epoll_wait(epoll_fd_, events, 64, max_wait_ms);
  if (n < 0) {
    if (errno == EINTR) return;
    fail("epoll_wait");
  }
  for (int i = 0; i < n && !stopping_; ++i) {
    const std::uint64_t id = events[i].data.u64;
    if (id == kTimerWatch) {
      std::uint64_t expirations;
      [[maybe_unused]] const ssize_t r = read(timer_fd_, &expirations, sizeof expirations);
      armed_deadline_ = -1;  // fired: re-arm on the next turn
      continue;
    }
    if (id == kWakeWatch) {
      std::uint64_t count;
      [[maybe_unused]] const ssize_t r = read(wake_fd_, &count, sizeof count);
      continue;
    }
    auto it = watches_.find(id);
    if (it == watches_.end()) continue;  // removed by an earlier callback of this batch
    const std::shared_ptr<IoCallback> fn = it->second.fn;
    (*fn)(events[i].events);
  }
  if (!stopping_) drain_posted();
  if (!stopping_) run_due_timers();
}

void EventLoop::run() {
  stopping_ = false;
  while (!stopping_) turn(-1);
}

void EventLoop::poll() {
  stopping_ = false;
  turn(0);
  arm_timerfd();  // timers scheduled during the turn make fd() readable when due
}

bool EventLoop::run_until(const std::function<bool()>& done, double timeout) {
  stopping_ = false;
  const double end = now() + timeout;
  while (!done() && !stopping_) {
    const double left = end - now();
    if (left <= 0) break;
    turn(static_cast<int>(std::ceil(std::min(left, 0.05) * 1000)));
  }
  stopping_ = false;
  return done();
}

}  // namespace swarmlab::exec
