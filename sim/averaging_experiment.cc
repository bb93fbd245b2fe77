#include "sim/averaging_experiment.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <map>
#include <optional>
#include <stdexcept>

#include "core/averaging/averaging_service.h"
#include "core/moshpit/grid.h"
#include "core/service_mux.h"
#include "sim/backend.h"
#include "sim/engine.h"
#include "sim/sim_world.h"

namespace swarmlab::sim {

using core::averaging::AveragingService;
using core::averaging::RoundOutcome;

core::codec::Codec codec_for(scenarios::WirePrecision precision) {
  switch (precision) {
    case scenarios::WirePrecision::Fp32: return core::codec::Codec::Fp32;
    case scenarios::WirePrecision::Fp16: return core::codec::Codec::Fp16;
    case scenarios::WirePrecision::Fp16Scaled: return core::codec::Codec::Fp16Scaled;
    case scenarios::WirePrecision::Uint8: return core::codec::Codec::Uint8Uniform;
  }
  throw std::logic_error("unknown wire precision");
}

core::averaging::Strategy strategy_for(scenarios::AveragingStrategy strategy) {
  switch (strategy) {
    case scenarios::AveragingStrategy::AllReduce: return core::averaging::Strategy::AllReduce;
    case scenarios::AveragingStrategy::ParameterServer: return core::averaging::Strategy::ParameterServer;
    case scenarios::AveragingStrategy::Planner: return core::averaging::Strategy::Planned;
  }
  throw std::logic_error("unknown strategy");
}

core::planner::PlannerInput planner_input(const scenarios::Scenario& sc, const TransportAssumptions& transport) {
  core::planner::PlannerInput in;
  const double g = transport.goodput_fraction;
  for (const auto& p : sc.peers)
    in.peers.push_back({p.compute_sps, p.download_bps * g, p.upload_bps * g,
                        p.reachability == scenarios::Reachability::Client});
  if (!sc.pair_caps.empty()) {
    in.pair_caps.assign(sc.peers.size(), std::vector<double>(sc.peers.size(), kUnlimited));
    for (const auto& cap : sc.pair_caps) in.pair_caps[cap.from][cap.to] = cap.bps * g;
  }
  in.target_batch = static_cast<double>(sc.workload.target_batch);
  in.gradient_bits =
      8.0 * static_cast<double>(core::codec::encoded_size(codec_for(sc.workload.wire_precision), sc.workload.parameters));
  return in;
}

std::unique_ptr<Network> make_scenario_network(const scenarios::Scenario& sc, const TransportAssumptions& transport,
                                               const std::string& backend, Engine& engine) {
  const double g = transport.goodput_fraction;
  std::vector<LinkSpec> links;
  for (const auto& p : sc.peers) links.push_back({p.download_bps * g, p.upload_bps * g, p.latency_s});
  auto network = make_network(backend, engine, std::move(links));
  for (const auto& cap : sc.pair_caps)
    network->set_pair_cap(static_cast<PeerId>(cap.from), static_cast<PeerId>(cap.to), cap.bps * g);
  // The bandwidth trace: each row changes a peer's link at its time, mid-transfer if need be.
  Network* net = network.get();
  for (const auto& e : sc.bandwidth.events) {
    const auto peer = static_cast<PeerId>(*sc.find_peer(e.peer));
    engine.at(e.time_s, [net, peer, down = e.download_bps * g, up = e.upload_bps * g] { net->set_capacity(peer, down, up); });
  }
  return network;
}

core::averaging::Timeouts scenario_timeouts(const scenarios::Scenario& sc, core::averaging::Timeouts t) {
  if (sc.averaging.sender_timeout_s) t.sender = *sc.averaging.sender_timeout_s;
  if (sc.averaging.reducer_timeout_s) t.reducer = *sc.averaging.reducer_timeout_s;
  if (sc.averaging.round_timeout_s) t.round = *sc.averaging.round_timeout_s;
  return t;
}

void schedule_availability(const scenarios::Scenario& sc, Engine& engine, std::function<void(PeerId)> up,
                           std::function<void(PeerId)> down) {
  auto up_if_allowed = [&sc, &engine, up](PeerId i) {
    if (sc.peer_up(i, engine.now())) up(i);  // a churn "up" outside the join/leave window is ignored
  };
  for (std::size_t k = 0; k < sc.peers.size(); ++k) {
    const auto i = static_cast<PeerId>(k);
    const auto& p = sc.peers[k];
    if (p.join_s && *p.join_s > 0) engine.at(*p.join_s, [up_if_allowed, i] { up_if_allowed(i); });
    if (p.leave_s) engine.at(*p.leave_s, [down, i] { down(i); });
  }
  for (const auto& e : sc.churn.events) {
    const auto i = static_cast<PeerId>(*sc.find_peer(e.peer));
    if (e.up) engine.at(e.time_s, [up_if_allowed, i] { up_if_allowed(i); });
    else engine.at(e.time_s, [down, i] { down(i); });
  }
}

std::vector<SimPeerSpec> sim_peers(const scenarios::Scenario& sc) {
  std::vector<SimPeerSpec> specs;
  for (const auto& p : sc.peers) specs.push_back({p.name, p.compute_sps});
  return specs;
}

namespace {

// Everything one run needs, so the round logic can be split into small steps.
class AveragingRun {
 public:
  AveragingRun(const scenarios::Scenario& sc, const AveragingRunConfig& cfg) : sc_(sc), cfg_(cfg) {
    network_ = make_scenario_network(sc, cfg.transport, cfg.backend, engine_);
    world_ = std::make_unique<SimWorld>(engine_, *network_, sim_peers(sc), sc.seed);
    world_->set_trace(cfg.trace);
    world_->set_delivery_observer([this](PeerId from, PeerId, const core::Message&) { on_delivered(from); });
    services_.resize(n());
    muxes_.resize(n());
    victims_.assign(n(), Victim{});
    for (PeerId i = 0; i < n(); ++i) boot(i);
    codec_ = codec_for(sc.workload.wire_precision);
    full_input_ = planner_input(sc, cfg.transport);
    timeouts_ = scenario_timeouts(sc, cfg.timeouts);
  }

  AveragingRunResult run() {
    result_.scenario = sc_.name;
    result_.strategy = std::string(core::averaging::name(cfg_.strategy));
    result_.backend = cfg_.backend;
    result_.payload_bytes_per_round = core::codec::encoded_size(codec_, sc_.workload.parameters);
    schedule_scenario_churn();
    engine_.at(0, [this] { start_round(); });
    engine_.run();
    double sum = 0;
    for (const auto& r : result_.rounds) sum += r.duration_s;
    result_.mean_round_s = result_.rounds.empty() ? 0 : sum / static_cast<double>(result_.rounds.size());
    for (PeerId i = 0; i < n(); ++i) result_.bytes_sent.push_back(world_->bytes_sent(i));
    result_.events = engine_.events_processed();
    return std::move(result_);
  }

 private:
  struct Victim {
    bool armed = false;
    std::uint64_t threshold = 0;  // leave after this many delivered messages
    std::uint64_t delivered = 0;
    SimWorld::Departure how = SimWorld::Departure::Crash;
  };

  PeerId n() const { return static_cast<PeerId>(sc_.peers.size()); }

  // A (re)started peer process: fresh protocol state, as after a restart.
  void boot(PeerId i) {
    services_[i] = std::make_unique<AveragingService>(world_->env(i));
    muxes_[i] = std::make_unique<core::ServiceMux>();
    AveragingService* svc = services_[i].get();
    muxes_[i]->add(core::Service::Averaging, [svc](PeerId from, core::Message m) { svc->handle(from, m); },
                   [svc](PeerId peer) { svc->on_link_failure(peer); });
    world_->env(i).set_sink(muxes_[i].get());
  }

  void take_down(PeerId i, SimWorld::Departure how) {
    if (!world_->is_up(i)) return;
    world_->set_down(i, how);
    victims_[i].armed = false;
    if (in_round_[i]) {
      in_round_[i] = false;
      ++record_.failures;
      member_left();
    }
  }

  void bring_up(PeerId i) {
    if (world_->is_up(i)) return;
    world_->set_up(i);
    boot(i);
  }

  // Join/leave times and the churn trace take peers down (as crashes) and up.
  void schedule_scenario_churn() {
    for (PeerId i = 0; i < n(); ++i)
      if (sc_.peers[i].join_s && *sc_.peers[i].join_s > 0) world_->set_down(i, SimWorld::Departure::Silent);
    schedule_availability(
        sc_, engine_, [this](PeerId i) { bring_up(i); }, [this](PeerId i) { take_down(i, SimWorld::Departure::Crash); });
  }

  // Roles for a set of members, re-solved only when the membership changes.
  const core::averaging::RoleAssignment& roles_for(const std::vector<bool>& members) {
    if (auto it = roles_cache_.find(members); it != roles_cache_.end()) return it->second;
    core::averaging::RoleAssignment roles =
        core::averaging::assign_roles_among(cfg_.strategy, full_input_, members, sc_.averaging.ps_peer);
    if (result_.roles.weights.empty()) result_.roles = roles;
    return roles_cache_.emplace(members, std::move(roles)).first->second;
  }

  // The groups of this round: everyone up, or Moshpit groups along the round's grid axis.
  std::vector<std::vector<bool>> groups_for_round(const std::vector<bool>& live) const {
    if (!sc_.averaging.group_size) return {live};
    std::vector<PeerId> up;
    for (PeerId i = 0; i < n(); ++i)
      if (live[i]) up.push_back(i);
    const core::moshpit::Grid grid(up.size(), *sc_.averaging.group_size);
    const core::moshpit::Partition& part = grid.groups_in_round(round_);
    std::vector<std::vector<bool>> groups;
    for (std::size_t g = 0; g < part.groups(); ++g) {
      std::vector<bool> members(n(), false);
      bool sender = false;
      for (std::uint32_t k : part.group(g)) {
        members[up[k]] = true;
        sender |= sc_.peers[up[k]].compute_sps > 0;
      }
      if (sender) groups.push_back(std::move(members));
    }
    return groups;
  }

  void start_round() {
    std::vector<bool> live(n());
    bool any_sender = false;
    for (PeerId i = 0; i < n(); ++i) {
      live[i] = world_->is_up(i);
      any_sender |= live[i] && sc_.peers[i].compute_sps > 0;
    }
    if (!any_sender) {
      // Nobody can contribute a gradient: wait for the next churn event, if any.
      if (engine_.pending() > 0) engine_.after(next_wait(), [this] { start_round(); });
      return;
    }
    const std::uint64_t length = sc_.workload.parameters;
    std::vector<core::averaging::RoundPlan> plans;
    for (const auto& members : groups_for_round(live)) {
      // Round ids are unique per group: the round in the high bits, the group in the low 20.
      const std::uint64_t id = (static_cast<std::uint64_t>(round_) << 20) | plans.size();
      plans.push_back(core::averaging::make_round_plan(id, roles_for(members), length, codec_, sc_.averaging.part_bytes));
    }
    record_ = RoundRecord{};
    record_.round = round_;
    record_.started_s = engine_.now();
    record_.groups = plans.size();
    fractions_.clear();
    in_round_.assign(n(), false);
    expected_of_.assign(n(), nullptr);
    expected_.assign(plans.size(), {});
    outstanding_ = 0;
    for (std::size_t g = 0; g < plans.size(); ++g) {
      record_.participants += plans[g].size();
      outstanding_ += plans[g].size();
      prepare_values(plans[g], expected_[g]);
      arm_failures(plans[g]);
      for (PeerId p : plans[g].members) {
        in_round_[p] = true;
        expected_of_[p] = &expected_[g];
      }
    }
    for (const auto& plan : plans) {
      for (std::size_t m = 0; m < plan.size(); ++m) {
        const PeerId peer = plan.members[m];
        const bool sends = plan.weights[m] > 0;
        std::span<float> span;
        if (cfg_.carry_values) span = values_[peer];
        services_[peer]->start_round(plan, span, timeouts_, [this, peer, sends, length](const RoundOutcome& out) {
          if (!in_round_[peer]) return;
          in_round_[peer] = false;
          record_.duration_s = std::max(record_.duration_s, out.finished - out.started);
          if (!out.completed) ++record_.incomplete;
          if (sends) {
            fractions_.push_back(out.fraction_averaged);
            if (cfg_.carry_values)
              for (std::uint64_t i = 0; i < length; ++i)
                record_.max_abs_error =
                    std::max(record_.max_abs_error, std::abs(values_[peer][i] - (*expected_of_[peer])[i]));
          }
          member_left();
        });
      }
    }
  }

  Seconds next_wait() const { return 1.0; }

  // Fresh random vectors for a group's members, and the exact weighted average they should reach.
  void prepare_values(const core::averaging::RoundPlan& plan, std::vector<double>& expected) {
    if (!cfg_.carry_values) return;
    const std::uint64_t length = plan.length();
    expected.assign(length, 0.0);
    double total_weight = 0;
    for (std::size_t m = 0; m < plan.size(); ++m) {
      auto& v = values_[plan.members[m]];
      v.resize(length);
      for (auto& x : v) x = static_cast<float>(value_rng_.normal());
      if (plan.weights[m] > 0) {
        total_weight += plan.weights[m];
        for (std::uint64_t i = 0; i < length; ++i) expected[i] += plan.weights[m] * v[i];
      }
    }
    for (auto& e : expected) e /= total_weight;
  }

  // Messages member `m` sends in a round: its parts of every other span, and its averaged parts
  // to every other sender.
  static std::uint64_t messages_sent(const core::averaging::RoundPlan& plan, std::size_t m) {
    std::uint64_t count = 0;
    if (plan.sends(m))
      for (std::size_t j = 0; j < plan.size(); ++j)
        if (j != m) count += plan.parts_in_span(j);
    const std::size_t other_senders = plan.sender_count() - (plan.sends(m) ? 1 : 0);
    return count + static_cast<std::uint64_t>(plan.parts_in_span(m)) * other_senders;
  }

  void arm_failures(const core::averaging::RoundPlan& plan) {
    std::vector<InjectedFailure> now;
    for (const auto& f : cfg_.failures)
      if (f.round == round_) now.push_back(f);
    for (const auto& f : sc_.failures)
      if (f.round == round_)
        now.push_back({static_cast<PeerId>(f.peer), f.round, f.after_fraction.value_or(-1), f.at_s.value_or(-1),
                       f.silent ? SimWorld::Departure::Silent : SimWorld::Departure::Crash, true});
    // The scenario's per-round failure probability: a random point of the member's round.
    for (std::size_t m = 0; m < plan.size(); ++m) {
      const PeerId peer = plan.members[m];
      const double p = sc_.peers[peer].failure_rate;
      if (p > 0 && failure_rng_.bernoulli(p)) {
        InjectedFailure f;
        f.peer = peer;
        f.round = round_;
        f.after_fraction = failure_rng_.uniform();
        now.push_back(f);
      }
    }
    for (const auto& f : now) {
      const auto m = plan.index_of(f.peer);
      if (!m) continue;
      if (f.rejoin_next_round) rejoin_.push_back(f.peer);
      if (f.after_fraction >= 0) {
        Victim& v = victims_[f.peer];
        v.armed = true;
        v.delivered = 0;
        v.how = f.how;
        v.threshold = static_cast<std::uint64_t>(std::ceil(f.after_fraction * static_cast<double>(messages_sent(plan, *m))));
        if (v.threshold == 0) engine_.after(0, [this, peer = f.peer, how = f.how] { take_down(peer, how); });
      } else {
        engine_.after(std::max(0.0, f.at_s), [this, peer = f.peer, how = f.how] { take_down(peer, how); });
      }
    }
  }

  void on_delivered(PeerId from) {
    Victim& v = victims_[from];
    if (!v.armed || ++v.delivered < v.threshold) return;
    v.armed = false;
    // Not from inside the network's callback: the failure happens right after this delivery.
    engine_.after(0, [this, from, how = v.how] { take_down(from, how); });
  }

  void member_left() {
    if (outstanding_ == 0 || --outstanding_ > 0) return;
    if (!fractions_.empty()) {
      record_.min_fraction_averaged = *std::min_element(fractions_.begin(), fractions_.end());
      double sum = 0;
      for (double f : fractions_) sum += f;
      record_.mean_fraction_averaged = sum / static_cast<double>(fractions_.size());
    }
    if (record_.failures > 0 && cfg_.carry_values) record_.max_abs_error = 0;  // no single exact average
    result_.rounds.push_back(record_);
    if (cfg_.on_round) cfg_.on_round(round_ + 1, cfg_.rounds);
    for (PeerId p : rejoin_)
      if (sc_.peer_up(p, engine_.now())) bring_up(p);
    rejoin_.clear();
    if (++round_ < cfg_.rounds) engine_.after(0, [this] { start_round(); });
    else engine_.stop();  // later churn events are irrelevant to the measurement
  }

  const scenarios::Scenario& sc_;
  const AveragingRunConfig& cfg_;
  Engine engine_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<std::unique_ptr<AveragingService>> services_;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes_;
  std::vector<Victim> victims_;
  core::codec::Codec codec_ = core::codec::Codec::Fp32;
  core::planner::PlannerInput full_input_;
  std::map<std::vector<bool>, core::averaging::RoleAssignment> roles_cache_;
  AveragingRunResult result_;
  std::uint32_t round_ = 0;
  std::size_t outstanding_ = 0;
  std::vector<bool> in_round_;
  RoundRecord record_;
  std::vector<double> fractions_;
  std::vector<PeerId> rejoin_;
  std::vector<std::vector<float>> values_ = std::vector<std::vector<float>>(sc_.peers.size());
  std::vector<std::vector<double>> expected_;        // per group
  std::vector<const std::vector<double>*> expected_of_;  // per peer: its group's average
  core::averaging::Timeouts timeouts_;
  core::Rng value_rng_{sc_.seed, 0xA11};
  core::Rng failure_rng_{sc_.seed, 0xFA11};
};

}  // namespace

AveragingRunResult run_averaging(const scenarios::Scenario& scenario, const AveragingRunConfig& config) {
  if (config.rounds == 0) throw std::invalid_argument("rounds must be >= 1");
  AveragingRun run(scenario, config);
  return run.run();
}

}  // namespace swarmlab::sim
