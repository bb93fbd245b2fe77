#pragma once
// One peer of a DeDLOC collaboration, the whole schedule of docs/dedloc.md §1 and §5 with no global
// view: it computes micro-batches at its own speed (Trainer), publishes its progress in the DHT and
// estimates the collaboration's (ProgressTracker), looks for an averaging group once the next
// global step is near (Matchmaker), waits until the collaboration's estimated samples reach the
// target batch, then averages its gradient with the group, weighted by samples (AveragingService,
// roles from the planner over the group's announced capacities) and applies the step. A peer
// whose step is more than one behind the global step downloads the state from an up-to-date peer
// it finds in the progress records (StateService) and throws away what it had accumulated.
//
// DPU on: averaging runs beside the next batch's computation and the step lands when the round
// ends (one step of staleness). DPU off: the trainer pauses during the round.
//
// The peer owns its services and is the environment's sink; destroying it is its process dying.
// Everything goes through the environment seam, so the same object runs in any binding.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/averaging/averaging_service.h"
#include "core/averaging/role_assignment.h"
#include "core/dht/node.h"
#include "core/env.h"
#include "core/matchmaking/matchmaker.h"
#include "core/progress/progress_tracker.h"
#include "core/service_mux.h"
#include "core/training/state_service.h"
#include "core/training/trainer.h"

namespace swarmlab::core::training {

struct CollaborativePeerConfig {
  std::string run = "swarmlab";          // names the DHT keys of this collaboration
  std::uint64_t target_batch = 4096;     // samples per global step
  bool dpu = false;
  std::uint64_t parameters = 0;          // gradient length
  codec::Codec codec = codec::Codec::Fp16;
  std::uint64_t part_bytes = averaging::kDefaultPartBytes;
  averaging::Strategy strategy = averaging::Strategy::Planned;
  averaging::Timeouts timeouts;
  planner::PeerCapacity capacity;        // what this peer announces; compute_sps > 0: it trains
  TrainerConfig trainer;
  StateConfig state;
  dht::DhtConfig dht;
  matchmaking::MatchmakingConfig matchmaking;  // its min_matchmaking_time is also how early to start
  Seconds progress_expiration = 60;      // DeDLOC ALBERT runs: 30 s
  Seconds report_period = 10;            // publish at least this often while training (plus at each step)
  Seconds min_fetch_period = 0.5;        // progress reads: eta / 2, kept within these bounds
  Seconds max_fetch_period = 10;
  Seconds group_timeout = 30;            // matchmaking gives up after this and tries again
};

// What the peer tells whoever hosts it (metrics, sample accounting). Every field may be empty.
struct CollaborativePeerEvents {
  std::function<void(std::uint64_t samples)> computed;
  // A round begins with `contributed` samples of this peer's (0 for a pure reducer).
  std::function<void(const averaging::RoundPlan&, std::uint64_t contributed)> round_started;
  // The round ended and the step was applied; `step` is this peer's new step.
  std::function<void(const averaging::RoundOutcome&, std::uint64_t contributed, std::uint64_t step)> round_finished;
  std::function<void(PeerId provider)> sync_started;
  std::function<void(bool ok, std::uint64_t step)> sync_finished;
  // Accumulated samples thrown away: the peer fell behind and loads newer state.
  std::function<void(std::uint64_t samples)> discarded;
};

class CollaborativePeer {
 public:
  enum class Phase { Joining, Syncing, Training };

  // Installs itself as env's sink. Throws std::invalid_argument on a zero target batch or parameter count.
  CollaborativePeer(Environment& env, CollaborativePeerConfig config, CollaborativePeerEvents events = {});
  ~CollaborativePeer();
  CollaborativePeer(const CollaborativePeer&) = delete;
  CollaborativePeer& operator=(const CollaborativePeer&) = delete;

  // Joins the DHT through `bootstrap` (empty: the first peer) and starts the schedule.
  void start(std::vector<PeerId> bootstrap);

  // The link rates it announces from now on (a bandwidth change it measured).
  void set_capacity(const planner::PeerCapacity& capacity);

  Phase phase() const { return phase_; }
  std::uint64_t step() const { return step_; }
  bool in_round() const { return in_round_; }
  std::uint64_t accumulated() const { return trainer_ ? trainer_->accumulated() : 0; }
  std::uint64_t contributed() const { return contributed_; }  // samples in the round in flight
  Seconds compute_time() const { return trainer_ ? trainer_->compute_time() : 0; }
  const dht::DhtNode& dht() const { return *dht_; }
  const matchmaking::Matchmaker& matchmaker() const { return *matchmaker_; }
  const progress::ProgressTracker& progress() const { return *progress_; }

 private:
  bool trains() const { return config_.capacity.compute_sps > 0; }
  void on_samples(std::uint64_t n);
  void report();
  void schedule_fetch(Seconds delay);
  void fetch();
  void on_progress(const progress::GlobalProgress& g);
  void start_sync(const progress::GlobalProgress& g);
  void start_training();
  void maybe_look_for_group(const progress::GlobalProgress& g);
  void on_group(std::optional<matchmaking::Group> group);
  void begin_round_when_ready(const matchmaking::Group& group);
  void wait_for_batch(const matchmaking::Group& group, Seconds deadline);
  void begin_round(const matchmaking::Group& group);
  void on_round_done(const averaging::RoundOutcome& outcome);
  // The roles for a group (cached by its announcements); nullptr when no member computes.
  const averaging::RoleAssignment* roles_for(const matchmaking::Group& group);

  Environment& env_;
  CollaborativePeerConfig config_;
  CollaborativePeerEvents events_;
  ServiceMux mux_;
  std::unique_ptr<dht::DhtNode> dht_;
  std::unique_ptr<progress::ProgressTracker> progress_;
  std::unique_ptr<matchmaking::Matchmaker> matchmaker_;
  std::unique_ptr<averaging::AveragingService> averaging_;
  std::unique_ptr<StateService> state_;
  std::unique_ptr<Trainer> trainer_;

  Phase phase_ = Phase::Joining;
  std::uint64_t step_ = 0;
  std::uint64_t known_global_step_ = 0;
  bool in_round_ = false;
  std::uint64_t contributed_ = 0;
  std::uint64_t round_step_ = 0;   // the step this round produces
  Seconds last_report_ = -1e300;
  TimerHandle fetch_timer_ = 0, ready_timer_ = 0;
  bool fetch_in_flight_ = false;
  std::map<std::vector<std::uint8_t>, std::optional<averaging::RoleAssignment>> roles_cache_;
  // Callbacks from the DHT and services may outlive this object; they check this flag first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::training
