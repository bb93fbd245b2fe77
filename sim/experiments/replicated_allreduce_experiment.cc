#include "sim/experiments/replicated_allreduce_experiment.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/allreduce/halving_doubling.h"
#include "core/allreduce/replica_peer.h"
#include "core/allreduce/requeue.h"
#include "core/moshpit/grid.h"
#include "core/names.h"
#include "sim/binding/sim_world.h"
#include "sim/engine.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::sim {

using core::PeerId;
using core::allreduce::ReplicaOutcome;
using core::allreduce::ReplicaPeer;

namespace {

constexpr core::Named<ReplicaFailure> kFailureNames[] = {{ReplicaFailure::None, "none"},
                                                         {ReplicaFailure::Follower, "follower"},
                                                         {ReplicaFailure::Leader, "leader"},
                                                         {ReplicaFailure::Group, "group"}};

// The P participants (replicas = 1) or their P x R replicas as a scenario: the link class of a
// participant is that of every replica of it.
scenarios::Scenario composition(const ReplicatedAllReduceConfig& c, std::uint32_t replicas) {
  scenarios::Scenario sc;
  sc.name = "hydra-allreduce";
  sc.seed = c.seed;
  sc.workload.model = "resnet50";
  sc.workload.parameters = c.parameters;
  sc.workload.wire_precision = c.codec;
  sc.workload.target_batch = 32768;
  const auto fast = static_cast<std::uint32_t>(std::lround(c.fast_share * c.groups));
  for (std::uint32_t g = 0; g < c.groups; ++g)
    for (std::uint32_t r = 0; r < replicas; ++r) {
      scenarios::PeerSpec p;
      // Built by appending: g++ 12 warns falsely (-Wrestrict) on "p" + std::to_string(...).
      p.group = "p";
      p.group += std::to_string(g);
      p.name = p.group;
      p.name += '-';
      p.name += std::to_string(r);
      const bool is_fast = g < fast;
      p.compute_sps = is_fast ? 400 : 70;  // Table 1's V100 and 1080 Ti estimates (planner only)
      p.download_bps = p.upload_bps = is_fast ? c.fast_bps : c.slow_bps;
      p.latency_s = c.latency_s;
      sc.peers.push_back(p);
    }
  return sc;
}

class HydraRound {
 public:
  HydraRound(const ReplicatedAllReduceConfig& c) : c_(c), sc_(composition(c, c.replicas)) {
    network_ = make_scenario_network(sc_, c.transport, c.backend, engine_);
    std::vector<SimPeerSpec> specs;
    for (const auto& p : sc_.peers) specs.push_back({p.name, p.compute_sps});
    world_ = std::make_unique<SimWorld>(engine_, *network_, specs, c.seed);
    for (std::uint32_t g = 0; g < c.groups; ++g) {
      std::vector<PeerId> members;
      for (std::uint32_t r = 0; r < c.replicas; ++r) members.push_back(g * c.replicas + r);
      groups_.push_back(members);
      for (PeerId p : members) {
        peers_.push_back(
            std::make_unique<ReplicaPeer>(world_->env(p), core::allreduce::replica_group_raft_config(g + 1), members));
        world_->env(p).set_sink(peers_.back().get());
      }
    }
    world_->set_delivery_observer([this](PeerId from, PeerId to, const core::Message& m) {
      if (from / c_.replicas == to / c_.replicas) replication_bytes_ += m.wire_size();
    });
  }

  // Runs until every group has a leader; returns when that was.
  double elect() {
    for (int i = 0; i < 200; ++i) {
      engine_.run_until(engine_.now() + 0.05);
      bool all = true;
      for (std::uint32_t g = 0; g < c_.groups; ++g) all = all && leader(g).has_value();
      if (all) return engine_.now();
    }
    throw std::runtime_error("hydra all-reduce: a group elected no leader in 10 s");
  }

  // One round among every group, with `failure` injected `failure_at` of `reference_s` into it.
  // Crashed replicas stay down.
  ReplicaRoundRecord round(ReplicaFailure failure, double reference_s) {
    core::allreduce::ReplicaGroupPlan plan;
    plan.round_id = ++round_id_;
    plan.weights.assign(c_.groups, 1.0);
    plan.length = c_.parameters;
    plan.codec = c_.codec;
    for (std::uint32_t g = 0; g < c_.groups; ++g) plan.groups.push_back(groups_[g]);
    // The victims: in the last group of the exchange proper (an extra, once folded in, is missed by
    // nobody), a slow participant (the mix lists its fast ones first).
    std::vector<PeerId> victims;
    const std::uint32_t g = core::allreduce::HalvingDoubling(c_.groups).blocks() - 1;
    const PeerId l = *leader(g);
    if (failure == ReplicaFailure::Leader) victims = {l};
    if (failure == ReplicaFailure::Follower)
      for (PeerId p : groups_[g])
        if (p != l && victims.empty()) victims = {p};
    if (failure == ReplicaFailure::Group) victims = groups_[g];
    ReplicaRoundRecord rec = run(plan, victims, c_.failure_at * reference_s);
    rec.failure = failure;
    return rec;
  }

  // The round after one that lost groups: the initiator drops them and re-queues their samples
  // onto the survivors (core/allreduce/requeue.h), so P - 1 groups average P groups' samples.
  // Nothing when the last round lost no group's data.
  std::optional<ReplicaRoundRecord> requeued_round() {
    const std::set<std::uint32_t> lost = core::allreduce::lost_groups(outcomes_);
    if (lost.empty()) return std::nullopt;
    engine_.run_until(engine_.now() + 1.0);  // groups whose partners changed settle
    core::allreduce::ReplicaGroupPlan next = core::allreduce::requeue_lost(last_plan_, lost);
    round_id_ = next.round_id;
    return run(next, {}, 0);
  }

 private:
  ReplicaRoundRecord run(core::allreduce::ReplicaGroupPlan plan, const std::vector<PeerId>& victims, double fail_after_s) {
    ReplicaRoundRecord rec;
    rec.groups = static_cast<std::uint32_t>(plan.groups.size());
    for (double w : plan.weights) rec.weight += w;
    for (auto& members : plan.groups) {  // the current leader first
      for (PeerId p : members)
        if (world_->is_up(p) && peers_[p]->raft().is_leader()) {
          std::stable_partition(members.begin(), members.end(), [&](PeerId q) { return q == p; });
          break;
        }
    }
    last_plan_ = plan;
    core::allreduce::ReplicaTimeouts timeouts;
    timeouts.partner = c_.partner_timeout_s;
    timeouts.round = 600;
    const double t0 = engine_.now();
    std::uint64_t sent0 = 0;
    for (PeerId p = 0; p < world_->size(); ++p) sent0 += world_->bytes_sent(p);
    replication_bytes_ = 0;
    outcomes_.assign(world_->size(), std::nullopt);
    waiting_ = 0;
    for (const auto& members : plan.groups)
      for (PeerId p : members) {
        if (!world_->is_up(p)) continue;
        ++waiting_;
        peers_[p]->start_round(plan, {}, timeouts, [this, p](const ReplicaOutcome& o) {
          outcomes_[p] = o;
          if (--waiting_ == 0) engine_.stop();
        });
      }
    for (PeerId v : victims)
      engine_.at(t0 + fail_after_s, [this, v] {
        if (!world_->is_up(v)) return;
        world_->set_down(v, SimWorld::Departure::Crash);
        if (!outcomes_[v] && --waiting_ == 0) engine_.stop();
      });
    engine_.at(t0 + timeouts.round + 1, [this] { engine_.stop(); });
    engine_.run();
    for (const auto& members : plan.groups)
      for (PeerId p : members) {
        if (!world_->is_up(p)) continue;
        if (!outcomes_[p] || !outcomes_[p]->completed) {
          rec.completed = false;
          continue;
        }
        const ReplicaOutcome& o = *outcomes_[p];
        if (o.led || c_.replicas == 1) rec.round_s = std::max(rec.round_s, o.finished - t0);
        rec.replicated_s = std::max(rec.replicated_s, o.finished - t0);
        rec.min_fraction_averaged = std::min(rec.min_fraction_averaged, o.fraction_averaged);
        if (o.took_over_at) rec.took_over_at = *o.took_over_at;
        if (o.led)
          for (const auto& lc : o.lost_chunks) rec.lost_chunk_bytes += core::codec::encoded_size(c_.codec, lc.elements);
      }
    for (PeerId p = 0; p < world_->size(); ++p) rec.bytes_sent += world_->bytes_sent(p);
    rec.bytes_sent -= sent0;
    rec.replication_bytes = replication_bytes_;
    return rec;
  }

  std::optional<PeerId> leader(std::uint32_t g) {
    for (PeerId p : groups_[g])
      if (world_->is_up(p) && peers_[p]->raft().is_leader()) return p;
    return std::nullopt;
  }

  const ReplicatedAllReduceConfig& c_;
  scenarios::Scenario sc_;
  Engine engine_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<std::vector<PeerId>> groups_;
  std::vector<std::unique_ptr<ReplicaPeer>> peers_;
  std::vector<std::optional<ReplicaOutcome>> outcomes_;
  core::allreduce::ReplicaGroupPlan last_plan_;
  std::size_t waiting_ = 0;
  std::uint64_t round_id_ = 0;
  std::uint64_t replication_bytes_ = 0;
};

}  // namespace

std::string_view name(ReplicaFailure f) { return core::name_of(kFailureNames, f); }

ReplicatedAllReduceResult run_replicated_allreduce(const ReplicatedAllReduceConfig& config) {
  if (config.groups < 2 || config.groups > 4096) throw std::invalid_argument("hydra all-reduce: groups must be in [2, 4096]");
  if (config.replicas < 1 || config.replicas > 7) throw std::invalid_argument("hydra all-reduce: replicas must be in [1, 7]");
  if (config.parameters < config.groups) throw std::invalid_argument("hydra all-reduce: fewer parameters than groups");
  if (!(config.failure_at > 0 && config.failure_at < 1)) throw std::invalid_argument("hydra all-reduce: failure_at in (0, 1)");
  ReplicatedAllReduceResult result;
  result.config = config;
  // Each failure on a fresh world, so that one measurement's crashed and restarted replicas do
  // not change the next one's leaders.
  double reference = 0;
  for (ReplicaFailure f : {ReplicaFailure::None, ReplicaFailure::Follower, ReplicaFailure::Leader, ReplicaFailure::Group}) {
    if ((f == ReplicaFailure::Follower || f == ReplicaFailure::Leader) && config.replicas < 2) continue;
    HydraRound run(config);
    const double elected = run.elect();
    if (f == ReplicaFailure::None) result.election_s = elected;
    result.rounds.push_back(run.round(f, reference));
    if (f == ReplicaFailure::None) reference = result.rounds.back().round_s;
    if (f == ReplicaFailure::Group) result.after_group_loss = run.requeued_round();
  }
  result.step_s = reference / core::allreduce::HalvingDoubling(config.groups).steps();
  if (config.compare_butterfly) {
    const scenarios::Scenario sc = composition(config, 1);
    // The core's averaging on the same participants (the averaging experiment's peers).
    const auto averaging = [&](const scenarios::Scenario& s, core::averaging::Strategy strategy, std::uint32_t rounds) {
      AveragingRunConfig ac;
      ac.strategy = strategy;
      ac.rounds = rounds;
      ac.backend = config.backend;
      ac.transport = config.transport;
      return run_averaging(s, ac);
    };
    result.butterfly_s = averaging(sc, core::averaging::Strategy::AllReduce, 1).mean_round_s;
    result.planner_s = averaging(sc, core::averaging::Strategy::Planned, 1).mean_round_s;
    // Moshpit on a two-axis grid: groups of the smallest m with m² >= P. (choose_group_size picks a
    // single group of everyone when nothing fails: the butterfly above.)
    std::uint32_t m = 2;
    while (m * m < config.groups) ++m;
    scenarios::Scenario moshpit = sc;
    moshpit.averaging.group_size = m;
    const auto rounds = static_cast<std::uint32_t>(core::moshpit::grid_shape(config.groups, m).dims);
    for (const RoundRecord& round : averaging(moshpit, core::averaging::Strategy::AllReduce, rounds).rounds)
      result.moshpit_s += round.duration_s;
    result.moshpit_group_size = m;
    result.moshpit_rounds = rounds;
  }
  return result;
}

}  // namespace swarmlab::sim
