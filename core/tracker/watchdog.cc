#include "core/tracker/watchdog.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace swarmlab::core::tracker {

TrackerWatchdog::TrackerWatchdog(Environment& env, TrackerClient& client, WatchdogOptions options,
                                 std::function<void()> on_lost)
    : env_(env), client_(client), options_(options), on_lost_(std::move(on_lost)) {
  if (!(options_.probe > 0) || !(options_.lost_after > 0))
    throw std::invalid_argument("tracker watchdog: probe and lost_after must be positive");
}

TrackerWatchdog::~TrackerWatchdog() {
  *alive_ = false;
  env_.cancel(timer_);
}

void TrackerWatchdog::start() {
  if (timer_) return;
  last_probe_ = env_.now() - options_.probe;  // probe at the first check
  check();
}

void TrackerWatchdog::stop() {
  env_.cancel(timer_);
  timer_ = 0;
}

void TrackerWatchdog::rearm() {
  fired_ = false;
  stop();
  start();
}

void TrackerWatchdog::check() {
  timer_ = 0;
  const Seconds now = env_.now();
  if (!client_.busy() && now - last_probe_ >= options_.probe) {
    last_probe_ = now;
    ++probes_;
    TrackerCommand query;
    query.op = TrackerOp::Query;
    client_.submit(query, nullptr);
  }
  if (const auto since = client_.waiting_since(); since && now - *since >= options_.lost_after) {
    fired_ = true;
    if (on_lost_) on_lost_();
    return;  // until rearm()
  }
  timer_ = env_.schedule(std::min(options_.probe, options_.lost_after / 4), [this, alive = alive_] {
    if (*alive) check();
  });
}

}  // namespace swarmlab::core::tracker
