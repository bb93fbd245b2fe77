#pragma once
// Coordination with a global view, for fast simulations (scenario training.coordination
// "oracle"): the simulator's stand-in for the DHT progress records and matchmaking
// (core/training/coordinator.h). It drives the same CollaborativePeer a real collaboration runs;
// only how the peer learns the collaboration's progress and meets its group differs:
// - progress: every peer's latest report, exactly, with no staleness and no messages;
// - groups: formed the moment the step is due and every peer that will average has asked for one
//   (peers loading state are not waited for; peers still in a round, or just up, are), all of
//   them in one group, or in Moshpit groups along one axis of the grid per round.
// What it costs in fidelity (no lookup latency, no failed matchmaking) is what makes it fast;
// `swarmlab albert` sets its steps/h beside the DHT's (docs/interpretations.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/env.h"
#include "core/matchmaking/group.h"
#include "core/progress/global_progress.h"
#include "core/progress/local_progress.h"
#include "core/training/coordinator.h"
#include "sim/engine.h"

namespace swarmlab::sim {

struct OracleOptions {
  core::progress::StepTarget target;
  // Moshpit: groups of at most this many, along axis (round mod d) of the grid over the peers
  // that ask. Absent: one group of all of them.
  std::optional<std::size_t> group_size;
};

class Oracle {
 public:
  // Called as groups form: the round's index (0, 1, ...) and its groups.
  using GroupsFormed = std::function<void(std::uint64_t round, const std::vector<core::matchmaking::Group>&)>;

  Oracle(Engine& engine, OracleOptions options);
  ~Oracle();
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  // A coordinator for the peer living in `env`. It registers the peer until it is destroyed (the
  // peer's process died).
  std::unique_ptr<core::training::Coordinator> coordinator(core::Environment& env, bool client_mode);

  void set_groups_formed(GroupsFormed observer) { groups_formed_ = std::move(observer); }
  std::uint64_t rounds() const { return round_; }

 private:
  class PeerCoordinator;
  struct Member {
    PeerCoordinator* coordinator = nullptr;
    core::progress::LocalProgress local;
    bool reported = false;
    bool client_mode = false;
    bool computes = false;  // from its announcement
    core::matchmaking::Attachment announcement;
  };

  void enroll(core::PeerId peer, PeerCoordinator* c, bool client_mode);
  void leave(core::PeerId peer);
  core::progress::GlobalProgress estimate(core::Seconds now, std::uint64_t floor_step,
                                         std::span<const core::PeerId> group) const;
  // Forms the due groups at the end of this instant's ordinary events (one check per instant).
  void schedule_check();
  void check();

  Engine& engine_;
  OracleOptions options_;
  // Registered peers by id (a simulation's ids are dense); coordinator == nullptr: none. Walking
  // it visits them in id order, as every check and estimate must.
  std::vector<Member> members_;
  Member& member(core::PeerId peer) { return members_[peer]; }
  const Member& member(core::PeerId peer) const { return members_[peer]; }
  // The last estimate: every peer asks at the same instants (a group forming, a step landing), and
  // the answer changes only with a report, a member coming or going, or the clock.
  struct EstimateMemo {
    core::Seconds now = 0;
    std::uint64_t floor_step = 0;
    std::vector<core::PeerId> group;
    core::progress::GlobalProgress estimate;
  };
  mutable std::optional<EstimateMemo> estimate_memo_;
  mutable std::vector<core::progress::PeerProgress> records_;  // estimate()'s scratch
  // The training peers at one step with their lineages (what peers_at lists, the asking peer
  // included): every peer checks it after each read, and it changes only when a peer's step,
  // lineage or activity does, or a peer comes or goes.
  struct Holders {
    std::uint64_t step = 0;
    std::vector<core::training::StateHolder> holders;
  };
  mutable std::optional<Holders> holders_;
  const std::vector<core::training::StateHolder>& holders_at(std::uint64_t step) const;
  bool check_scheduled_ = false;
  std::uint64_t round_ = 0;
  std::uint64_t next_group_id_ = 1;
  GroupsFormed groups_formed_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::sim
