#pragma once
// Coordination, as a collaborative peer needs it (docs/dedloc.md §3, §5): the collaboration's
// progress (what step it is at, how close the next one is, who is up to date) and the averaging
// group to step with. Two implementations drive the same peer:
// - DhtCoordinator (core/training/dht_coordinator.h): progress records in the DHT and
//   leader/follower matchmaking, what a real collaboration runs;
// - the simulator's oracle (sim/binding/oracle.h): exact sample counts and instant groups, for
//   fast sweeps.
//
// The peer tells its coordinator its own progress whenever it changes; the coordinator decides how
// often that costs messages. Callbacks never run inside the call that asked for them.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/matchmaking/group.h"
#include "core/progress/global_progress.h"
#include "core/progress/local_progress.h"
#include "core/service_mux.h"
#include "core/training/state_lineage.h"
#include "core/types.h"

namespace swarmlab::core::training {

class Coordinator {
 public:
  using Joined = std::function<void(bool ok)>;
  using ProgressCallback = std::function<void(const progress::GlobalProgress&)>;
  using GroupCallback = std::function<void(std::optional<matchmaking::Group>)>;

  virtual ~Coordinator() = default;

  // Adds the message services it runs (if any) to the peer's mux.
  virtual void attach(ServiceMux& mux) = 0;
  // Joins the collaboration through `bootstrap` (empty: this peer is the first).
  virtual void join(std::vector<PeerId> bootstrap, Joined done) = 0;

  // This peer's progress as of now.
  virtual void report(const progress::LocalProgress& local) = 0;
  // A fresh view of the collaboration's progress.
  virtual void fetch(ProgressCallback done) = 0;
  // The estimate at `now` from what the last fetch saw, without messages. `group`: the members of
  // a group formed for the step, whose quotas alone it waits for (core/progress/global_progress.h);
  // empty: the whole collaboration.
  virtual progress::GlobalProgress estimate(Seconds now, std::span<const PeerId> group) const = 0;
  // An averaging round dropped `peer` (it died, left, or was too slow): stop counting on it until it
  // reports again, so that groups do not wait for a dead peer whose record has not expired.
  virtual void member_lost(PeerId peer) = 0;
  // The peers the last fetch saw at `step` that can serve state (not in client mode), with the
  // lineage of the state each holds; this peer may be among them (callers skip it). A view, valid
  // until the coordinator is used again: a peer reads it after every progress read, and at 256
  // peers copying it each time cost a tenth of a simulated run.
  virtual std::span<const StateHolder> peers_at(std::uint64_t step) const = 0;

  // Attached to this peer's group membership: what the others need to plan the round with it
  // (its capacity, core/matchmaking/group_plan.h).
  virtual void set_announcement(std::vector<std::uint8_t> bytes) = 0;
  // Looks for an averaging group for a step expected to be due at `due`: `done` gets one, or
  // nullopt after `timeout` or cancel_search().
  virtual void look_for_group(GroupCallback done, Seconds timeout, Seconds due) = 0;
  virtual void cancel_search() = 0;
  virtual bool looking() const = 0;
};

}  // namespace swarmlab::core::training
