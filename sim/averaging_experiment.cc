#include "sim/averaging_experiment.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/averaging/averaging_service.h"
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

AveragingRunResult run_averaging(const scenarios::Scenario& sc, const AveragingRunConfig& cfg) {
  if (cfg.rounds == 0) throw std::invalid_argument("rounds must be >= 1");
  const std::size_t n = sc.peers.size();
  const double g = cfg.transport.goodput_fraction;
  Engine engine;
  std::vector<LinkSpec> links;
  std::vector<SimPeerSpec> specs;
  for (const auto& p : sc.peers) {
    links.push_back({p.download_bps * g, p.upload_bps * g, p.latency_s});
    specs.push_back({p.name, p.compute_sps});
  }
  auto network = make_network(cfg.backend, engine, links);
  for (const auto& cap : sc.pair_caps) network->set_pair_cap(static_cast<PeerId>(cap.from), static_cast<PeerId>(cap.to), cap.bps * g);
  SimWorld world(engine, *network, specs, sc.seed);
  world.set_trace(cfg.trace);

  AveragingRunResult result;
  result.scenario = sc.name;
  result.strategy = std::string(core::averaging::name(cfg.strategy));
  result.backend = cfg.backend;
  result.roles = core::averaging::assign_roles(cfg.strategy, planner_input(sc, cfg.transport));
  const core::codec::Codec codec = codec_for(sc.workload.wire_precision);
  const std::uint64_t length = sc.workload.parameters;
  result.payload_bytes_per_round = core::codec::encoded_size(codec, length);

  std::vector<std::unique_ptr<AveragingService>> services;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes;
  for (PeerId i = 0; i < n; ++i) {
    services.push_back(std::make_unique<AveragingService>(world.env(i)));
    muxes.push_back(std::make_unique<core::ServiceMux>());
    AveragingService* svc = services.back().get();
    muxes.back()->add(
        core::Service::Averaging, [svc](PeerId from, core::Message m) { svc->handle(from, m); },
        [svc](PeerId peer) { svc->on_link_failure(peer); });
    world.env(i).set_sink(muxes.back().get());
  }

  // Real values, when asked: fresh random vectors every round and the exact weighted average.
  std::vector<std::vector<float>> values(n);
  std::vector<double> expected;
  core::Rng value_rng(sc.seed, 0xA11);

  std::uint32_t round = 0;
  std::size_t outstanding = 0;
  RoundRecord record;
  std::function<void()> start_round = [&] {
    core::averaging::RoundPlan plan =
        core::averaging::make_round_plan(round, result.roles, length, codec, sc.averaging.part_bytes);
    record = RoundRecord{};
    record.round = round;
    record.started_s = engine.now();
    record.participants = plan.size();
    if (cfg.carry_values) {
      expected.assign(length, 0.0);
      double total_weight = 0;
      for (std::size_t m = 0; m < plan.size(); ++m) {
        auto& v = values[plan.members[m]];
        v.resize(length);
        for (auto& x : v) x = static_cast<float>(value_rng.normal());
        if (plan.weights[m] > 0) {
          total_weight += plan.weights[m];
          for (std::uint64_t i = 0; i < length; ++i) expected[i] += plan.weights[m] * v[i];
        }
      }
      for (auto& e : expected) e /= total_weight;
    }
    outstanding = plan.size();
    for (std::size_t m = 0; m < plan.size(); ++m) {
      const PeerId peer = plan.members[m];
      const bool sends = plan.weights[m] > 0;
      std::span<float> span;
      if (cfg.carry_values) span = values[peer];
      services[peer]->start_round(plan, span, cfg.timeouts, [&, peer, sends](const RoundOutcome& out) {
        record.duration_s = std::max(record.duration_s, out.finished - out.started);
        if (!out.completed) ++record.failed_members;
        if (sends) {
          record.min_fraction_averaged = std::min(record.min_fraction_averaged, out.fraction_averaged);
          if (cfg.carry_values)
            for (std::uint64_t i = 0; i < length; ++i)
              record.max_abs_error = std::max(record.max_abs_error, std::abs(values[peer][i] - expected[i]));
        }
        if (--outstanding == 0) {
          result.rounds.push_back(record);
          if (cfg.on_round) cfg.on_round(round + 1, cfg.rounds);
          if (++round < cfg.rounds) engine.after(0, start_round);
        }
      });
    }
  };
  engine.at(0, start_round);
  engine.run();
  if (result.rounds.size() != cfg.rounds) throw std::runtime_error("averaging run ended before all rounds finished");

  double sum = 0;
  for (const auto& r : result.rounds) sum += r.duration_s;
  result.mean_round_s = sum / static_cast<double>(result.rounds.size());
  for (PeerId i = 0; i < n; ++i) result.bytes_sent.push_back(world.bytes_sent(i));
  result.events = engine.events_processed();
  return result;
}

}  // namespace swarmlab::sim
