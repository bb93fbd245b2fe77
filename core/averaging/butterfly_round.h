#pragma once
// One peer's side of one butterfly all-reduce round (docs/dedloc.md §4). The flattened vector is
// split into one span per member; every sender streams to each reducer the parts of that reducer's
// span, the reducer averages each part over all senders, weighted, and returns it to every sender.
// Because messages to one peer travel in order and the network runs all pairs at once, sending part
// k+1 overlaps reducing part k and returning part k-1.
//
// Failures: a sender silent for sender_timeout while a reducer waits on it is dropped by that
// reducer: parts it already delivered keep its contribution, later parts are averaged without it
// (its weight leaves the denominator). A reducer silent for reducer_timeout while a sender waits on
// it is dropped by that sender, which keeps its own values for that span. A broken connection
// (on_link_failure) drops the peer at once. A round not finished by round_timeout fails; the
// outcome says how much of the vector was averaged.
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "core/averaging/part_message.h"
#include "core/averaging/reduce_cost.h"
#include "core/averaging/round_plan.h"
#include "core/env.h"

namespace swarmlab::core::averaging {

struct Timeouts {
  Seconds sender = 30;                                          // hivemind-era DeDLOC runs: 30 s
  Seconds reducer = 60;                                         // 2 × sender (docs/dedloc.md §4)
  Seconds round = std::numeric_limits<double>::infinity();      // hivemind's optimizer: 60 s
};

struct RoundOutcome {
  std::uint64_t round_id = 0;
  bool completed = false;         // every span resolved before the round timeout
  Seconds started = 0, finished = 0;
  // Share of this peer's vector that holds averaged values (1 when nothing failed). For a member
  // that only reduces, the share of its span's parts it averaged and returned.
  double fraction_averaged = 0;
  std::vector<PeerId> dropped_senders;   // as a reducer
  std::vector<PeerId> dropped_reducers;  // as a sender
  // As a sender: the members (in plan order, itself included) whose span did not come back whole,
  // dropped or too slow. Those spans hold this peer's own values, wholly or in part.
  std::vector<PeerId> unaveraged_spans;
  // As a reducer of a plan with `clip`: contributions CenteredClip clipped, summed over its parts.
  std::uint64_t clipped_contributions = 0;
};

class ButterflyRound {
 public:
  // Runs once when this peer is done with the round. It must not destroy the round synchronously
  // (AveragingService defers that to the next turn of the event loop).
  using Done = std::function<void(const RoundOutcome&)>;

  // `values` is this peer's vector (plan.length() floats) when the round carries real values, and
  // empty for a sizes-only simulation. Averaged values are written into it as they arrive.
  // `cost`: with plan.clip, each clipped part's reply leaves only after the reducer's processor
  // has spent cost.of_clip on it, one part after another (zero live: the real clip takes its time).
  ButterflyRound(Environment& env, RoundPlan plan, std::span<float> values, Timeouts timeouts, Done done,
                 ReduceCost cost = {});
  ~ButterflyRound();
  ButterflyRound(const ButterflyRound&) = delete;
  ButterflyRound& operator=(const ButterflyRound&) = delete;

  void start();
  // A decoded part for this round from `from`. Malformed or unexpected parts are counted and dropped.
  void on_part(PeerId from, const DecodedPart& part);
  void on_link_failure(PeerId peer);

  bool finished() const { return finished_; }
  const RoundPlan& plan() const { return plan_; }
  std::uint64_t rejected_messages() const { return rejected_; }

 private:
  struct PartAccumulator {
    double weight = 0;             // Σ weights of senders included so far
    std::uint32_t contributions = 0;
    bool finalized = false;
    TimerHandle reply_timer = 0;   // with a ReduceCost: its average waits for the clip's time
    // With plan.clip: each contribution kept whole until the part is finalized, with its member
    // index and weight (CenteredClip needs them all; the weighted mean needs only the sum).
    std::vector<float> rows;
    std::vector<std::pair<std::size_t, double>> row_senders;
  };
  struct SenderState {             // as a reducer, per member that sends
    std::uint32_t received = 0;    // parts delivered so far (they arrive in order)
    bool dropped = false;
    Seconds last_heard = 0;
    TimerHandle watchdog = 0;
  };
  struct ReducerState {            // as a sender, per member that reduces
    std::uint32_t received = 0;
    bool dropped = false;
    Seconds last_heard = 0;
    TimerHandle watchdog = 0;
  };

  void send_parts();
  void on_contribution(std::size_t sender, const DecodedPart& part);
  void on_averaged(std::size_t reducer, const DecodedPart& part);
  void try_finalize(std::uint32_t part);
  void finalize(std::uint32_t part);
  // Sends part k's average to the senders and keeps it as this member's own.
  void reply(std::uint32_t part, const Message& averaged);
  void drop_sender(std::size_t sender);
  void drop_reducer(std::size_t reducer);
  void arm_sender_watchdog(std::size_t sender);
  void arm_reducer_watchdog(std::size_t reducer);
  std::uint32_t expected_contributions(std::uint32_t part) const;
  bool reducer_role_done() const;
  bool sender_role_done() const;
  void set_pacing(bool on);
  void maybe_finish();
  void finish(bool completed);
  bool carries_values() const { return !values_.empty(); }
  bool clips() const { return plan_.clip.has_value() && carries_values(); }
  // Adds one contribution to part k's accumulator.
  void add_contribution(std::uint32_t k, std::size_t member, double weight, std::span<const float> x);
  // Part k's aggregate (the weighted mean, or CenteredClip).
  void aggregate(std::uint32_t k, std::span<float> out);

  Environment& env_;
  RoundPlan plan_;
  std::span<float> values_;
  Timeouts timeouts_;
  Done done_;
  ReduceCost cost_;
  std::size_t me_ = 0;
  bool started_ = false;
  bool finished_ = false;
  Seconds started_at_ = 0;
  TimerHandle round_timer_ = 0;
  std::uint64_t rejected_ = 0;

  // Reducer side.
  std::uint32_t my_parts_ = 0;
  std::uint32_t finalized_parts_ = 0;
  // Clipped parts whose average waits for the processor (ReduceCost), and when it is next free.
  std::uint32_t waiting_replies_ = 0;
  Seconds busy_until_ = 0;
  std::vector<PartAccumulator> accumulators_;
  std::vector<float> sums_;               // weighted sums over my span (real values, no clip)
  std::uint64_t clipped_ = 0;             // contributions CenteredClip clipped, over my parts
  std::vector<SenderState> senders_;      // indexed by member
  // Sender side.
  std::vector<ReducerState> reducers_;    // indexed by member
  std::uint64_t averaged_elements_ = 0;   // elements of my vector that hold averages
};

}  // namespace swarmlab::core::averaging
