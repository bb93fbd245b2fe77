#pragma once
// One peer of a collaboration: the whole training schedule of docs/dedloc.md §1 and §5 (and
// DiLoCo's, docs/opendiloco.md §1), with no global view. It is the only training schedule in the
// project; every binding hosts it unchanged.
//
// The peer computes micro-batches with its learner (Trainer), tells its coordinator its progress
// and reads the collaboration's, looks for an averaging group once the next global step is near,
// waits until the step is due, then averages with its group (roles from the planner over the
// members' announced capacities), weighted by samples, and applies the step. A peer more than one
// step behind, or one step behind and in no round (matchmaking left it out of the last one),
// downloads the state from an up-to-date peer and throws away what it had accumulated.
// So does one whose state, at the collaboration's step, is not the one most peers there hold (a
// round that failed for it alone, a step it sat out: core/training/state_lineage.h).
//
// When a step is due:
// - DeDLOC (quota = 0): the collaboration's samples reach the target batch. With delayed parameter
//   updates (dpu) averaging runs beside the next batch's computation and the step lands when the
//   round ends (one step of staleness); without, the trainer pauses during the round.
// - Quota > 0: every computing peer has contributed exactly `quota` samples. DiLoCo sets it to
//   H x local batch (its compute calls are inner steps and the round averages pseudo-gradients);
//   an averaging-only run sets it to 1 with an instant learner, so steps are averaging rounds back
//   to back (DeDLOC's Table 1). Averaging is always in sequence then.
//
// What is injected (PeerParts): the coordinator (DHT in a real collaboration, an oracle in fast
// simulations), the learner (libtorch live, a virtual one in the simulator) and optionally the
// averager (by default AveragingService's butterfly rounds, or Hydra's halving-doubling under
// strategy "hd"). The peer owns them; destroying it is its process dying.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/averaging/averager.h"
#include "core/averaging/roles_cache.h"
#include "core/relay/reachability.h"
#include "core/env.h"
#include "core/planner/planner.h"
#include "core/progress/global_progress.h"
#include "core/service_mux.h"
#include "core/training/coordinator.h"
#include "core/training/group_input_cache.h"
#include "core/training/learner.h"
#include "core/training/mode.h"
#include "core/training/round_timeouts.h"
#include "core/training/state_service.h"
#include "core/training/trainer.h"

namespace swarmlab::core::training {

struct CollaborativePeerConfig {
  Mode mode = Mode::Dedloc;
  std::uint64_t target_batch = 4096;  // samples per global step (quota = 0)
  std::uint64_t quota = 0;            // > 0: every computing peer contributes exactly this many per step
  bool dpu = false;                   // DeDLOC with a pooled target only
  // A peer behind the collaboration (more than one step, or one step and in no round) downloads
  // the state. False for runs that carry no model (averaging-only): such a peer adopts the global
  // step.
  bool sync_state = true;
  codec::Codec codec = codec::Codec::Fp16;
  std::uint64_t part_bytes = averaging::kDefaultPartBytes;
  averaging::Strategy strategy = averaging::Strategy::Planned;
  // Robust aggregation: this peer reduces its spans with CenteredClip (docs/trust.md §3). Every
  // member of a collaboration must agree on it, as on the codec.
  std::optional<averaging::CenteredClip> clip;
  // The processor time the clip is charged where time is simulated; zero live (the real clip
  // takes its own time).
  averaging::ReduceCost reduce_cost;
  std::optional<PeerId> parameter_server;  // ParameterServer: this peer serves whenever it is a member
  RoundTimeoutBounds timeouts;             // bounds of the adaptive timeouts (round_timeouts.h)
  planner::PeerCapacity capacity;          // what this peer announces; compute_sps > 0: it trains
  TrainerConfig trainer;
  StateConfig state;
  Seconds matchmaking_lead = 5;            // look for a group once the next step is this close
  Seconds min_fetch_period = 0.5;          // progress reads: ever more often as the step nears,
  Seconds max_fetch_period = 10;           //   within these bounds
  Seconds group_timeout = 30;              // a search, or a formed group's wait for the step, gives up after this
  // Steps a training peer keeps the averaged vector of, to replay them to a peer holding an older
  // state (docs/interpretations.md §26); 0 keeps none.
  std::size_t kept_updates = 4;
  // What one remote peer may cost this one before it is banned (core/peer_limits.h).
  PeerLimitsConfig limits;
  // Who reaches whom (docs/trust.md §4): the rounds' routes, so that client-mode peers reached
  // through relays aggregate and the relays' links are planned. Shared by every peer of the
  // collaboration and outliving it; null: client-mode peers aggregate nothing.
  std::shared_ptr<const relay::Reachability> reachability;
  // Solved roles, shared by every peer a simulation hosts (a pure function's memo); null: the
  // peer keeps its own.
  std::shared_ptr<averaging::RolesCache> roles_cache;
  // Groups' planner inputs, shared the same way (a memo too); null: the peer keeps its own.
  std::shared_ptr<GroupInputCache> group_inputs;

  // The step target a coordinator of this peer must estimate against.
  progress::StepTarget step_target() const;
};

// What the peer plugs in.
struct PeerParts {
  std::unique_ptr<Coordinator> coordinator;
  std::unique_ptr<Learner> learner;
  std::unique_ptr<averaging::Averager> averager;  // null: by the strategy (AveragingService, or HalvingDoublingAverager for hd)
};

// What the peer tells whoever hosts it (metrics, sample accounting). Every field may be empty.
struct CollaborativePeerEvents {
  std::function<void(std::uint64_t samples)> computed;
  // This peer joined a group for the step after `step` (it may still have no role in the round).
  std::function<void(const matchmaking::Group&, std::uint64_t step)> grouped;
  // A round begins with `contributed` samples of this peer's (0 for a pure reducer).
  std::function<void(const averaging::RoundPlan&, std::uint64_t contributed)> round_started;
  // The round ended and the step was applied; `step` is this peer's new step.
  std::function<void(const averaging::RoundOutcome&, std::uint64_t contributed, std::uint64_t step)> round_finished;
  std::function<void(PeerId provider)> sync_started;
  // updates: it asked for the steps it missed, not the whole state (state_service.h).
  std::function<void(bool ok, std::uint64_t step, bool updates)> sync_finished;
  // Accumulated samples thrown away: the peer fell behind and loads newer state.
  std::function<void(std::uint64_t samples)> discarded;
  // The peer's step changed: a round ended, it sat a round out, it loaded or adopted a newer step.
  std::function<void(std::uint64_t step)> stepped;
};

class CollaborativePeer {
 public:
  enum class Phase { Joining, Syncing, Training };

  // Installs its mux as env's sink. Throws std::invalid_argument on a missing coordinator or
  // learner, a zero target (batch and quota), DPU with a quota, a learner without parameters, or
  // CenteredClip with halving-doubling.
  CollaborativePeer(Environment& env, CollaborativePeerConfig config, PeerParts parts,
                    CollaborativePeerEvents events = {});
  ~CollaborativePeer();
  CollaborativePeer(const CollaborativePeer&) = delete;
  CollaborativePeer& operator=(const CollaborativePeer&) = delete;

  // Joins the collaboration through `bootstrap` (empty: the first peer) and starts the schedule.
  void start(std::vector<PeerId> bootstrap);

  // Stops taking part before the host exits: no new group search or round and no more computing;
  // a group already formed still averages, so its other members are not left waiting.
  void leave();
  bool left() const { return left_; }

  // The link rates and compute speed it announces from now on (a change it measured). A peer that
  // trains keeps training (compute_sps 0 leaves its speed as it was); one that does not never starts.
  void set_capacity(const planner::PeerCapacity& capacity);

  Phase phase() const { return phase_; }
  std::uint64_t step() const { return step_; }
  std::uint64_t lineage() const { return lineage_; }  // names the state it holds at step()
  bool in_round() const { return in_round_; }
  std::uint64_t accumulated() const { return trainer_ ? trainer_->accumulated() : 0; }
  std::uint64_t contributed() const { return contributed_; }  // samples in the round in flight
  std::uint64_t round_step() const { return round_step_; }     // the step the round in flight produces
  bool quota_reached() const { return trainer_ && trainer_->quota_reached(); }
  Seconds compute_time() const { return learner_->compute_seconds(); }
  const Coordinator& coordinator() const { return *coordinator_; }
  Learner& learner() { return *learner_; }
  const RoundTimeouts& timeouts() const { return timeouts_; }
  std::uint64_t rejected_states() const { return rejected_states_; }
  // Groups declined because this peer had already averaged under their id.
  std::uint64_t repeated_groups() const { return repeated_groups_; }
  // Groups it was left out of because another member announced a newer state (state_cohort.h).
  std::uint64_t left_behind() const { return left_behind_; }
  // What each remote peer may cost this one (core/peer_limits.h): bans, budgets.
  const PeerLimits& limits() const { return *limits_; }
  // The planner's input for a round with this group: its capacities, and with a reachability
  // table its routes.
  std::shared_ptr<const planner::PlannerInput> round_input(const matchmaking::Group& group);
  // The roles this peer computes for a group (indexed like its members); nullptr when the group
  // cannot average (nobody computes, or the strategy cannot run with these members).
  const averaging::RoleAssignment* roles_for(const matchmaking::Group& group,
                                             const std::shared_ptr<const planner::PlannerInput>& input);

 private:
  bool trains() const { return config_.capacity.compute_sps > 0; }
  // It trains on the collaboration's state, loading it when it falls behind: its announcement
  // carries its step (state_cohort.h).
  bool holds_state() const { return config_.sync_state && trainer_ != nullptr; }
  // Hands the coordinator what it attaches to its join requests: capacity and state step.
  void announce();
  bool sequential() const { return !config_.dpu || config_.quota > 0; }
  // Its group's round has begun (not merely formed and waiting for the step to be due).
  bool averaging() const { return in_round_ && !waiting_; }
  void on_samples(std::uint64_t n);
  void report();
  void schedule_fetch(Seconds delay);
  void fetch();
  void on_progress(const progress::GlobalProgress& g);
  // True when this peer's state at its step is not the collaboration's.
  bool diverged() const;
  // The step the round of `group` produces: one past the step this peer and the collaboration
  // reached (for a pure reducer, see the .cc, which also remembers the group's senders for its
  // next group). `input`: the group's round input.
  std::uint64_t next_round_step(const matchmaking::Group& group, const planner::PlannerInput& input);
  // Loads the state of the collaboration's step (or this peer's, if later) from another peer.
  // Throws away what the trainer and learner accumulated on parameters the peer no longer holds,
  // and counts it as discarded.
  void discard_accumulated();
  void start_sync(const progress::GlobalProgress& g);
  // Whom to ask for the state at `step`, other than `skip`; nullopt: nobody yet.
  std::optional<PeerId> state_provider(std::uint64_t step, const std::set<PeerId>& skip = {});
  // Updates (state_service.h): the wire precision they are kept in, keeping the vector of the
  // round in flight as the update that leads to (step_after, lineage_after), serving the kept ones
  // from a state, and applying received ones (false: they do not fit this learner).
  codec::Codec update_codec() const;
  void keep_update(std::uint64_t step_after, std::uint64_t lineage_after);
  std::optional<StateSnapshot> kept_updates(std::uint64_t since_step, std::uint64_t since_lineage) const;
  bool apply_updates(const StateSnapshot& got);
  void start_training();
  void maybe_look_for_group(const progress::GlobalProgress& g);
  void on_group(std::optional<matchmaking::Group> group);
  // Begins the round of waiting_ once the step is due, or schedules the next look.
  void wait_for_step();
  struct WaitingRound;
  void begin_round(const WaitingRound& round);
  void on_round_done(const averaging::RoundOutcome& outcome);
  void set_step(std::uint64_t step, std::uint64_t lineage);

  Environment& env_;
  CollaborativePeerConfig config_;
  CollaborativePeerEvents events_;
  std::unique_ptr<PeerLimits> limits_;
  std::unique_ptr<ServiceMux> mux_;
  // Declared in dependency order: destroyed in reverse, the trainer before the learner it drives.
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Learner> learner_;
  std::unique_ptr<averaging::Averager> averager_;
  std::unique_ptr<StateService> state_;
  std::unique_ptr<Trainer> trainer_;
  RoundTimeouts timeouts_;

  Phase phase_ = Phase::Joining;
  std::uint64_t step_ = 0;
  std::uint64_t lineage_ = 0;
  std::uint64_t known_global_step_ = 0;
  std::size_t seen_peers_ = 0;  // progress records in the last read
  Seconds last_read_at_ = 0;    // when it was read (the start before the first)
  bool in_round_ = false;
  bool sent_ = false;              // this peer's vector is in the round in flight
  std::uint64_t round_id_ = 0;
  std::uint64_t contributed_ = 0;
  std::uint64_t round_step_ = 0;   // the step this round produces
  Seconds group_formed_ = 0;
  // A group formed before its step was due, with its planner input (round_input), built once.
  struct WaitingRound {
    matchmaking::Group group;
    std::shared_ptr<const planner::PlannerInput> input;
    // The roles on_group found, valid while the roles cache's generation is unchanged.
    const averaging::RoleAssignment* roles = nullptr;
    std::uint64_t roles_generation = 0;
  };
  std::optional<WaitingRound> waiting_;
  Seconds waiting_deadline_ = 0;                     // it begins then, due or not
  std::vector<float> reducer_scratch_;  // the vector of a round this peer only reduces (real values)
  std::span<float> round_values_;       // the learner's vector in the round in flight (when it sends values)
  std::size_t round_size_ = 0;          // members of the round in flight
  std::vector<PeerId> last_senders_;    // a pure reducer: the members that computed in its last group
  std::vector<PeerId> round_members_;   // that round's members and their spans, to zero the unaveraged ones
  std::vector<std::uint64_t> round_span_begin_;
  std::vector<PeerId> round_senders_;   // the other senders of the round in flight
  // The other senders of this peer's last round when it came back whole: they hold the state it
  // left this peer with, whether or not their records say so yet (diverged()); cleared once this
  // peer holds another state (set_step).
  std::vector<PeerId> partners_;
  TimerHandle fetch_timer_ = 0, ready_timer_ = 0;
  bool fetch_in_flight_ = false;
  // Rounds begun so far: a progress read that was in flight when a round began reports the
  // collaboration as it was before that round, and is read again instead (fetch).
  std::uint64_t rounds_begun_ = 0;
  bool downloading_ = false;  // a state download is in flight
  // Providers whose updates did not come since the last sync that worked: the others are asked
  // for updates first, and the whole state is loaded once every provider has failed.
  std::set<PeerId> refused_updates_;
  struct KeptUpdate {
    std::uint64_t step_before = 0, lineage_before = 0, step_after = 0, lineage_after = 0;
    std::vector<std::uint8_t> bytes;     // the averaged vector in update_codec() (real learners)
    std::uint64_t virtual_bytes = 0;     // its size otherwise
  };
  std::deque<KeptUpdate> kept_;           // the last steps, oldest first, a chain
  bool left_ = false;
  std::uint64_t rejected_states_ = 0;
  std::uint64_t repeated_groups_ = 0;
  std::uint64_t left_behind_ = 0;
  // Callbacks from services may outlive this object; they check this flag first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::training
