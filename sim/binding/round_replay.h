#pragma once
// A faster binding for averaging rounds: the network time of a round the simulator has already
// simulated, replayed instead of simulated again. A butterfly round of sizes only over the fluid
// model is a deterministic function of its plan (members, spans, senders, codec, pacing) and of the
// members' access links, provided nothing else loads those links. Training runs repeat the same
// round thousands of times (48 h of ALBERT is about 8,000 of them per setup), and simulating each
// costs thousands of messages; replaying one costs an event per member.
//
// How: every peer averages through a RoundReplay::averager, which hands rounds to the core's
// AveragingService unless it can replay them.
// - A round is replayed when a round with the same plan and links has been recorded (the same
//   roles and links: which member sends, how many parts of how many KiB it reduces, its access
//   link, how it paces to each other member and the pair caps between them; neither the order the
//   group lists them in nor which peers they are matters, so two alike peers that swap roles
//   replay the same recording, each as the other did), every member
//   is up, no member's link carries other bulk traffic when the first member starts it, no
//   member's link changes, no member leaves and no peer arrives as scheduled before the replayed
//   round would end, and no peer that came up after the start is yet to start its first round
//   (it may load the state from a member at any moment: peer_joined).
//   Each member then finishes when the recorded round's member did, counted from the moment the
//   last member started (members may start at different moments); what it sends is charged when
//   the round starts, what it receives when it finishes, as the network would count them.
// - A round is recorded when it was simulated and came out clean: every member completed with
//   nobody dropped, no member went down, no member moved other bulk traffic meanwhile (a state
//   download under way at either end when the round begins counts), and its members started
//   within 1% of its length of each other (a late starter's round replays too short elsewhere).
// - A replayed round whose membership breaks before every member started (a member goes down, or
//   one has not started a sender timeout after the first) is handed to the AveragingService at
//   that moment, so failures are simulated, not replayed. A member that goes down after all
//   started without notice (an experiment's kill; scheduled departures are known beforehand, see
//   next_change) is not: the others finish when recorded, but without that member's span if it
//   reduced one and died before they finished (they keep their own values there, as the core's
//   round does when a reducer's link breaks; documented in docs/interpretations.md).
// Rounds that carry real values are always simulated.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "core/averaging/averager.h"
#include "core/averaging/averaging_service.h"
#include "core/averaging/strategy.h"
#include "core/env.h"
#include "core/wire.h"
#include "sim/binding/sim_world.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

struct ReplayStats {
  std::uint64_t simulated = 0;  // rounds simulated by the AveragingService
  std::uint64_t replayed = 0;   // rounds replayed
  std::uint64_t recorded = 0;   // distinct rounds recorded
  std::uint64_t converted = 0;  // replays handed to the AveragingService when membership broke
};

class RoundReplay {
 public:
  // `link_of(peer)`: the peer's access link now. `next_change(peer)`: when its link next changes,
  // it next leaves as scheduled or any peer next arrives as scheduled (a bandwidth trace row, a
  // churn departure, a join; +infinity if never): a round that would still run then is simulated,
  // since how a departure ends a round is the protocol's to decide, and a newcomer loads the state
  // from members at moments no recording knows (see peer_joined).
  // `pair_cap(from, to)`: the network's cap on that ordered pair (+infinity: none), fixed for the
  // life of the RoundReplay.
  RoundReplay(SimWorld& world, std::function<LinkSpec(PeerId)> link_of, std::function<double(PeerId)> next_change,
              std::function<double(PeerId, PeerId)> pair_cap);
  ~RoundReplay();
  RoundReplay(const RoundReplay&) = delete;
  RoundReplay& operator=(const RoundReplay&) = delete;

  // Whether replays can stand in for this strategy's rounds: butterfly rounds (AR, PS, Ours), not
  // Hydra's halving-doubling, whose peers average through their own HalvingDoublingAverager.
  static bool stands_in_for(core::averaging::Strategy strategy) {
    return strategy != core::averaging::Strategy::HalvingDoubling;
  }

  // The averager of the peer living in `env` (a SimWorld environment); the rounds it simulates
  // charge `cost` for CenteredClip, as the peer's own AveragingService would.
  std::unique_ptr<core::averaging::Averager> averager(core::Environment& env, core::averaging::ReduceCost cost = {});

  // What the network does not say but a replay must know: a peer went down; a state download
  // from `provider` to `downloader` began or ended (it loads both ends' links: no round of
  // theirs that runs meanwhile, begun before or after, is clean enough to record).
  void peer_down(PeerId peer);
  // A peer came up after the start. Until it starts its first round (or goes down) it may begin a
  // state download from any member at any moment, and a replayed round's bytes never meet it, so
  // no round is replayed meanwhile (docs/interpretations.md §23).
  void peer_joined(PeerId peer);
  void download_began(PeerId downloader, PeerId provider);
  void download_ended(PeerId downloader);

  const ReplayStats& stats() const { return stats_; }

 private:
  class PeerAverager;
  enum class Mode { Simulate, Replay };
  struct Start {
    PeerAverager* averager = nullptr;
    core::averaging::RoundPlan plan;
    std::span<float> values;
    core::averaging::Timeouts timeouts;
    core::averaging::ButterflyRound::Done done;
  };
  // A recorded round: its pairs (pairs_of), and per member in the canonical order
  // (Round::position) what happened.
  struct Recorded {
    std::vector<double> pairs;
    std::vector<core::Seconds> finish;  // after the last member started
    std::vector<std::uint64_t> sent, received;
  };
  struct Round {
    Mode mode = Mode::Simulate;
    std::vector<std::uint8_t> head;         // head_of
    std::vector<double> pairs;              // simulated and not recorded yet: pairs_of, to record
    std::vector<PeerId> members;
    std::vector<std::size_t> position;      // per member: its place in the canonical order
    bool clean = true;
    std::size_t started = 0, finished = 0;
    core::Seconds first_start = 0, last_start = 0;
    std::vector<bool> has_started, has_finished;
    std::vector<double> span_share;         // per member: its span's share of the vector
    std::vector<core::Seconds> down_at;     // per member: when it went down (+inf: up)
    std::map<std::size_t, Start> waiting;   // replay: starts held until every member started
    bool scheduled = false;                 // replay: every member started, finishes scheduled
    const Recorded* recorded = nullptr;     // replay: what is replayed
    std::vector<core::Seconds> finish_at;   // simulated: per member
    std::vector<std::uint64_t> sent0, received0, sent, received;
  };

  void start(PeerAverager& a, core::averaging::RoundPlan plan, std::span<float> values, core::averaging::Timeouts timeouts,
             core::averaging::ButterflyRound::Done done);
  // A round is replayed as one recorded with the same head and pairs. The head: codec, part size
  // and every member's link, role and span, in a canonical order (`order`: the plan's member at
  // each place), O(members). The pairs: the pacing and the pair cap of every ordered pair of
  // members in that order, O(members²); compared in place against the few recordings of a head,
  // and built only for a round that is to be recorded.
  std::vector<std::uint8_t> head_of(const core::averaging::RoundPlan& plan, std::vector<std::size_t>& order) const;
  // f(pacing, pair cap) for every ordered pair of members in canonical order (cap 0 from a member
  // to itself), until f returns false; whether it never did.
  template <typename F>
  bool for_each_pair(const core::averaging::RoundPlan& plan, const std::vector<std::size_t>& order, F&& f) const;
  std::vector<double> pairs_of(const core::averaging::RoundPlan& plan, const std::vector<std::size_t>& order) const;
  bool same_pairs(const core::averaging::RoundPlan& plan, const std::vector<std::size_t>& order,
                  const std::vector<double>& pairs) const;
  const Recorded* find_recording(const core::averaging::RoundPlan& plan, const std::vector<std::uint8_t>& head,
                                 const std::vector<std::size_t>& order);
  bool is_recorded(const std::vector<std::uint8_t>& head, const std::vector<double>& pairs) const;
  bool quiet(const std::vector<PeerId>& members) const;
  void simulate(std::uint64_t round_id, std::size_t member, Start s);
  void on_simulated(std::uint64_t round_id, std::size_t member, const core::averaging::RoundOutcome& outcome,
                    const core::averaging::ButterflyRound::Done& done);
  // Whether a simulated round's members started within kRecordSkew of its length of each other.
  static bool started_together(const Round& r);
  void replay_all(std::uint64_t round_id);
  void convert(std::uint64_t round_id);
  // Member `member`'s side of the round is over (finished, or gone); the last one closes the round.
  void member_finished(std::uint64_t round_id, std::size_t member);

  SimWorld& world_;
  std::function<LinkSpec(PeerId)> link_of_;
  std::function<double(PeerId)> next_change_;
  std::function<double(PeerId, PeerId)> pair_cap_;
  std::map<std::uint64_t, Round> rounds_;                    // in flight, by round id
  std::map<PeerId, PeerId> downloads_;                       // in flight: downloader -> provider
  std::map<PeerId, std::size_t> loaded_;                     // per peer: downloads in flight at either end
  std::set<PeerId> newcomers_;                               // joined, no round started yet
  bool loaded(PeerId peer) const { return loaded_.count(peer) > 0; }
  void mark_unclean(PeerId peer);
  // By head; a deque, so that replays in flight keep pointing at their Recorded.
  std::map<std::vector<std::uint8_t>, std::deque<Recorded>, core::BytesLess> recorded_;
  // The last round matched to a recording by its pairs. A static collaboration runs the same group
  // round after round with one plan (core::averaging::RolesCache hands the same pacing matrix on),
  // and comparing its O(members²) pairs each time cost a tenth of a 256-peer run.
  struct LastMatch {
    std::shared_ptr<const std::vector<double>> pace;
    std::vector<PeerId> members;
    std::vector<std::size_t> order;
    std::vector<std::uint8_t> head;
    const Recorded* recording = nullptr;
  } last_;
  ReplayStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::sim
