#include "sim/experiments/run_cost.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

#include "core/codec/codec.h"
#include "core/input_error.h"
#include "core/input_limits.h"
#include "sim/binding/round_replay.h"
#include "traces/text.h"

namespace swarmlab::sim {
namespace {

// Measured on the flow backend (Release): engine events per averaging message (send, flow start
// and finish, delivery, the reducer's bookkeeping), bytes a queued message holds, bytes one traced
// span holds (its name string included), and bytes of a simulated peer (environment, service
// stacks, per-round state).
constexpr double kEventsPerMessage = 6;
constexpr double kBytesPerQueuedMessage = 256;
constexpr double kBytesPerSpan = 160;
constexpr double kBytesPerPeer = 64 * 1024;
// A replayed round: events per member (measured: 69 events per round of 8 peers); a round's
// record, its row in results.json as built in memory, and rounds.csv.
constexpr double kEventsPerReplayedPeerRound = 9;
constexpr double kBytesPerRoundRecord = 1536;
// The DHT experiment: requests per lookup (α = 3 parallel, about log2 N hops, replies and the
// store to k replicas), events per request, bytes per peer (routing table, stored keys).
constexpr double kEventsPerDhtRequest = 4;
constexpr double kBytesPerDhtPeer = 48 * 1024;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1e6 ? "%.0f" : "%.2g", v);
  return buf;
}

// Whether the peers and their links stay as they start for the whole run: no joins, leaves,
// churn, bandwidth trace or failures.
bool static_collaboration(const scenarios::Scenario& sc) {
  if (!sc.failures.empty() || !sc.churn.events.empty() || !sc.bandwidth.events.empty()) return false;
  for (const auto& p : sc.peers)
    if (p.failure_rate > 0 || p.join_s || p.leave_s) return false;
  return true;
}

std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", bytes / double(1ull << 30));
  return buf;
}

}  // namespace

RunCost averaging_cost(const scenarios::Scenario& sc, core::averaging::Strategy strategy, std::uint64_t rounds,
                       bool replay, bool carry_values, bool traced) {
  const double n = static_cast<double>(sc.peers.size());
  const double gradient = static_cast<double>(core::codec::encoded_size(sc.workload.wire_precision, sc.workload.parameters));
  const double part = static_cast<double>(sc.averaging.part_bytes);
  // Butterfly: every sender sends its part of every other span and gets every averaged span back:
  // about 2·n·(G/part + n) messages. Parameter server: every peer sends G/part parts and gets them back.
  // Halving-doubling moves the butterfly's bytes in fewer, larger chunks: the butterfly's count bounds it.
  const double parts = std::ceil(gradient / part);
  const double per_round = strategy == core::averaging::Strategy::ParameterServer ? 2 * n * parts : 2 * n * (parts + n);
  // Identical butterfly rounds are replayed (sim/binding/round_replay.h) when nothing fails on
  // purpose; a replayed round costs a few events per peer. Count two simulated rounds then, as a bound.
  replay = replay && RoundReplay::stands_in_for(strategy);
  const double r = static_cast<double>(rounds);
  const double simulated = replay && static_collaboration(sc) ? std::min(r, 2.0) : r;
  RunCost c;
  c.events = simulated * per_round * kEventsPerMessage + (r - simulated) * n * kEventsPerReplayedPeerRound;
  c.memory_bytes = n * kBytesPerPeer + per_round * kBytesPerQueuedMessage + r * kBytesPerRoundRecord +
                   (strategy == core::averaging::Strategy::Planned || !sc.pair_caps.empty() ? 3 * n * n * 8 : 0) +
                   (traced ? (simulated * per_round + (r - simulated) * n) * kBytesPerSpan : 0) +
                   (carry_values ? 3 * n * static_cast<double>(sc.workload.parameters) * 4 : 0);
  c.what = num(n) + " peers, " + num(parts) + " parts of " + num(part) + " bytes per gradient, about " + num(per_round) +
           " messages per round, " + num(simulated) + " of " + num(r) + " rounds simulated message by message" +
           (traced ? ", every message traced" : "") + (carry_values ? ", values carried" : "");
  return c;
}

namespace {

// A DeDLOC step as the core predicts it at the starting capacities: the pooled compute's time for
// the target batch, and the averaging round's. nullopt where no prediction applies.
struct PredictedStep {
  double compute_s = 0, round_s = 0;
  double seconds(bool dpu) const { return dpu ? std::max(compute_s, round_s) : compute_s + round_s; }
};

std::optional<PredictedStep> predicted_step(const scenarios::Scenario& sc, const TransportAssumptions& transport) {
  double sps = 0;
  for (const auto& p : sc.peers) sps += p.compute_sps;
  if (sc.training.mode != core::training::Mode::Dedloc || !(sps > 0) || sc.peers.size() < 2 ||
      sc.peers.size() > core::limits::kMaxPlannerPeers)
    return std::nullopt;
  PredictedStep step;
  step.compute_s = static_cast<double>(sc.workload.target_batch) / sps;
  try {
    const core::planner::PlannerInput input = planner_input(sc, transport);
    const auto roles = core::averaging::assign_roles(sc.averaging.strategy, input, sc.averaging.ps_peer);
    step.round_s = core::averaging::predicted_round_seconds(roles, input, sc.workload.parameters, sc.workload.wire_precision);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!std::isfinite(step.round_s)) return std::nullopt;
  return step;
}

// training_cost with the step already predicted (nullopt: none applies, or the collaboration
// changes as it runs), so that the estimate below solves the planner once.
RunCost training_cost_given(const scenarios::Scenario& sc, double duration_s, bool dpu,
                            const std::optional<PredictedStep>& predicted) {
  const double n = static_cast<double>(sc.peers.size());
  double sps = 0;
  for (const auto& p : sc.peers) sps += p.compute_sps;
  const double micro = static_cast<double>(std::max<std::uint64_t>(sc.training.micro_batch, 1));
  const double interval = sc.training.metrics_interval_s;
  // Steps: at most the pooled compute over the target batch (DiLoCo: a local step per local batch).
  const double batch = static_cast<double>(sc.workload.target_batch);
  double steps = duration_s * sps / batch;
  double compute_calls = duration_s * sps / micro;
  std::string bounded_by = "compute";
  if (const auto& step = predicted; step && 2 * duration_s / step->seconds(dpu) < steps) {
    // Twice the steps the predicted round time allows; without delayed updates the peers compute
    // only between rounds.
    steps = 2 * duration_s / step->seconds(dpu);
    if (!dpu) compute_calls = std::min(compute_calls, steps * batch / micro);
    bounded_by = "rounds of " + three_digits(step->round_s) + " s";
  }
  // Each step is an averaging round; identical ones are replayed, but count each as n messages at least.
  const double gradient = static_cast<double>(core::codec::encoded_size(sc.workload.wire_precision, sc.workload.parameters));
  const double parts = std::ceil(gradient / static_cast<double>(sc.averaging.part_bytes));
  const double round_messages = 2 * n * (parts + n);
  // Distinct rounds (joins, leaves, churn); with nat_traversal every round is simulated, relayed
  // messages twice.
  const double simulated_rounds = sc.nat_traversal ? 2 * steps : std::min(steps, 50.0) + steps * 0.02;
  const double buckets = duration_s / interval;
  RunCost c;
  c.events = compute_calls * 2 + steps * n * kEventsPerMessage + simulated_rounds * round_messages * kEventsPerMessage;
  c.memory_bytes = n * kBytesPerPeer + round_messages * kBytesPerQueuedMessage + buckets * 64 * (1 + n) + steps * 64 +
                   3 * n * n * 8;
  c.what = num(n) + " peers computing " + num(sps) + " samples/s for " + num(duration_s) + " s: at most " + num(steps) +
           " optimizer steps of " + num(batch) + " samples (bound by " + bounded_by + "), " + num(compute_calls) +
           " compute calls of " + num(micro) + " samples, " + num(round_messages) + " messages per averaging round, " +
           num(buckets) + " metrics buckets of " + num(interval) + " s";
  return c;
}

}  // namespace

RunCost training_cost(const scenarios::Scenario& sc, double duration_s, bool dpu, const TransportAssumptions& transport) {
  return training_cost_given(sc, duration_s, dpu,
                             static_collaboration(sc) ? predicted_step(sc, transport) : std::nullopt);
}

double expected_training_events(const scenarios::Scenario& sc, double duration_s, bool dpu,
                                const TransportAssumptions& transport) {
  const auto step = predicted_step(sc, transport);
  const double bound = training_cost_given(sc, duration_s, dpu, static_collaboration(sc) ? step : std::nullopt).events;
  if (!step) return bound;
  const double steps = duration_s / step->seconds(dpu);
  // Per step: one event per micro-batch, and the members' round (replayed: a few events each).
  const double batch = static_cast<double>(sc.workload.target_batch);
  const double micro = static_cast<double>(std::max<std::uint64_t>(sc.training.micro_batch, 1));
  const double n = static_cast<double>(sc.peers.size());
  return std::min(bound, steps * (batch / micro + n * kEventsPerReplayedPeerRound));
}

RunCost dht_cost(const DhtExperimentConfig& cfg) {
  const double n = cfg.peers;
  const double hours = cfg.hours;
  const double lookup_requests = 3 * std::max(1.0, std::log2(std::max(n, 2.0))) + 2.0 * static_cast<double>(cfg.dht.num_replicas);
  const double join_window = cfg.join_window_s >= 0 ? cfg.join_window_s : std::max(60.0, 0.05 * n);
  const double phase_h = hours + (join_window + cfg.settle_s) / 3600;
  const double replacements = cfg.churn_per_hour * n * hours;
  // Workload lookups and stores, republishes (every live key each period), bucket refreshes and
  // joins (a few lookups each).
  const double keys = n * cfg.puts_per_peer_per_hour * std::min(hours, cfg.key_lifetime_s / 3600 + 1);
  const double lookups = n * hours * (cfg.gets_per_peer_per_hour + cfg.puts_per_peer_per_hour) +
                         keys * hours * 3600 / std::max(cfg.republish_period_s, 1.0) + (n + replacements) * 4 +
                         n * phase_h * 160 / 60;  // refreshes: about 160 buckets an hour per peer
  RunCost c;
  c.events = lookups * lookup_requests * kEventsPerDhtRequest;
  c.memory_bytes = (n + replacements) * kBytesPerDhtPeer + keys * (static_cast<double>(cfg.value_bytes) + 128) * static_cast<double>(cfg.dht.num_replicas);
  c.what = num(n) + " peers for " + num(hours) + " h: about " + num(lookups) + " lookups of about " +
           num(lookup_requests) + " requests each (" + traces::format_plain(cfg.gets_per_peer_per_hour) + " gets and " +
           traces::format_plain(cfg.puts_per_peer_per_hour) + " puts per peer-hour, " + num(replacements) +
           " replacements)";
  return c;
}

void check_budget(const RunCost& cost, const RunBudget& budget, const std::string& source, const std::string& location) {
  const double max_bytes = budget.max_memory_gib * double(1ull << 30);
  if (cost.events <= budget.max_events && cost.memory_bytes <= max_bytes) return;
  throw core::InputError(source, location,
                         "this run is estimated at " + num(cost.events) + " simulated events and " +
                             gib(cost.memory_bytes) + " GiB of memory (" + cost.what + "): expected at most " +
                             num(budget.max_events) + " events and " + gib(max_bytes) +
                             " GiB on this machine; raise the budget with --max-events and --max-memory-gib if it has "
                             "the time and memory");
}

void check_planner_size(const scenarios::Scenario& sc, bool roles_search, const std::string& command) {
  const std::uint64_t limit = roles_search ? core::limits::kMaxPlannerRolesPeers : core::limits::kMaxPlannerPeers;
  if (sc.peers.size() <= limit) return;
  throw core::InputError(
      sc.source, "peers",
      command + ": the DeDLOC planner " + (roles_search ? "with its roles search " : "") + "solves at most " +
          std::to_string(limit) + " peers within seconds (its LP grows with the square of the peers); this scenario has " +
          std::to_string(sc.peers.size()) + ": expected at most " + std::to_string(limit) +
          " peers, or a strategy without the planner (\"ar\" or \"ps\")");
}

}  // namespace swarmlab::sim
