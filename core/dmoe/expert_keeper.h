#pragma once
// Experts outlive their runtime (docs/learning-at-home.md §5): a runtime stores each hosted
// expert's checkpoint in the DHT every checkpoint_period_s, and watches the experts it backs up.
// When a watched expert has not been announced for longer than the announcements' t (its
// last-level prefix is no longer alive), the watcher loads the newest checkpoint from the DHT, or
// starts the expert afresh when there is none, hosts it and announces it at once.
#include <cstdint>
#include <memory>
#include <map>
#include <vector>

#include "core/dht/node.h"
#include "core/dmoe/expert_announcer.h"
#include "core/dmoe/expert_runtime.h"
#include "core/env.h"

namespace swarmlab::core::dmoe {

struct KeeperConfig {
  Seconds checkpoint_period_s = 120;
  Seconds checkpoint_ttl_s = 3600;  // a checkpoint stays in the DHT this long after it was stored
  Seconds watch_period_s = 30;      // how often watched experts are checked
  // Checks in a row that must find a watched expert gone: one replica that missed an announcement
  // must not start a second copy of a live expert.
  std::uint32_t lapsed_checks = 2;
  std::size_t check_responses = 3;  // replicas whose answers a check merges
};

struct KeeperStats {
  std::uint64_t checkpoints_stored = 0;
  std::uint64_t checkpoints_too_large = 0;  // over the DHT's value limit: not stored
  std::uint64_t checks = 0;                 // liveness lookups of watched experts
  std::uint64_t misses = 0;                 // checks that did not find a watched expert seen before
  std::uint64_t taken_over = 0;             // from a checkpoint
  std::uint64_t restarted_fresh = 0;        // no usable checkpoint was found
};

class ExpertKeeper {
 public:
  ExpertKeeper(Environment& env, dht::DhtNode& dht, ExpertRuntime& runtime, ExpertAnnouncer& announcer,
               KeeperConfig config = {});
  ~ExpertKeeper();
  ExpertKeeper(const ExpertKeeper&) = delete;
  ExpertKeeper& operator=(const ExpertKeeper&) = delete;

  // Starts the checkpoint and watch timers. `watched`: the experts this runtime takes over
  // (std::invalid_argument for a uid outside the runtime's grid).
  void start(std::vector<ExpertUid> watched);
  const KeeperStats& stats() const { return stats_; }

 private:
  void store_checkpoints();
  void check_watched();
  void take_over(const ExpertUid& uid);

  Environment& env_;
  dht::DhtNode& dht_;
  ExpertRuntime& runtime_;
  ExpertAnnouncer& announcer_;
  KeeperConfig config_;
  std::vector<ExpertUid> watched_;
  std::map<ExpertUid, std::uint32_t> misses_;  // watched experts seen alive: checks in a row that missed them
  std::vector<ExpertUid> taking_over_;  // lookups of their checkpoints are under way
  TimerHandle checkpoint_timer_ = 0, watch_timer_ = 0;
  KeeperStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::dmoe
