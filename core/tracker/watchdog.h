#pragma once
// How a dataset's creator tells that its tracker group was lost as a whole (docs/hydra.md §2), so
// that it reboots the group from its latest snapshot (reboot.h): the group is lost when a command
// of the creator's client has gone unanswered for `lost_after`, the client trying each server in
// turn meanwhile. A group that keeps a majority elects a leader and answers within an election and
// a few retries; one that lost its majority never answers again. To always have a command to time,
// the watchdog submits a Query every `probe` while the client is idle.
//
// It fires once (on_lost); the host reboots, retargets the client and calls rearm() to watch the
// new group. A partition that hides a live group for `lost_after` is taken for a loss too: the
// reboot founds a new generation and the hosts drop the old one, so updates acknowledged after the
// snapshot are lost (the client can list them, TrackerClient::lost_since_reboot).
#include <cstdint>
#include <functional>
#include <memory>

#include "core/env.h"
#include "core/tracker/client.h"

namespace swarmlab::core::tracker {

struct WatchdogOptions {
  Seconds lost_after = 10;  // unanswered this long: the group is lost
  Seconds probe = 2;        // a Query this often while the client is idle
};

class TrackerWatchdog {
 public:
  // Throws std::invalid_argument unless 0 < probe and 0 < lost_after.
  TrackerWatchdog(Environment& env, TrackerClient& client, WatchdogOptions options, std::function<void()> on_lost);
  ~TrackerWatchdog();
  TrackerWatchdog(const TrackerWatchdog&) = delete;
  TrackerWatchdog& operator=(const TrackerWatchdog&) = delete;

  void start();
  void stop();
  // Watch again after a reboot (the client already retargeted).
  void rearm();

  bool fired() const { return fired_; }
  std::uint64_t probes() const { return probes_; }

 private:
  void check();

  Environment& env_;
  TrackerClient& client_;
  WatchdogOptions options_;
  std::function<void()> on_lost_;
  bool fired_ = false;
  Seconds last_probe_ = 0;
  std::uint64_t probes_ = 0;
  TimerHandle timer_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::tracker
