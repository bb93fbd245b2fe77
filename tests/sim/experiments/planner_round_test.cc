// The planner's split, executed: on random compositions (asymmetric links, client peers, CPU-only
// reducers, regional pair caps), the butterfly round with the plan's fractions and pacing, run
// over the fluid network, takes the plan's round_time_s (1 / span_averaging_rate) within 1%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

#include "../../core/planner/random_compositions.h"
#include "core/averaging/averaging_service.h"
#include "core/averaging/part_message.h"
#include "core/averaging/role_assignment.h"
#include "core/planner/planner.h"
#include "core/service_mux.h"
#include "sim/engine.h"
#include "sim/network/flow_network.h"
#include "sim/binding/sim_world.h"

namespace swarmlab::sim {
namespace {

namespace planner = core::planner;
namespace averaging = core::averaging;

struct RoundRun {
  double seconds = 0;  // from the first member's start to the last member's finish
  std::size_t completed = 0, members = 0;
  double wire_per_payload = 1;  // bytes on the wire per payload byte of a full part
};

// One butterfly round of `length` fp32 elements with the plan's roles, fractions and pacing.
RoundRun run_round(const planner::PlannerInput& in, const planner::Plan& plan, std::uint64_t length,
                   std::uint64_t part_bytes) {
  const std::size_t n = in.peers.size();
  Engine engine;
  std::vector<LinkSpec> links;
  for (const auto& p : in.peers) links.push_back({p.download_bps, p.upload_bps, 0.0});
  FlowNetwork network(engine, links);
  for (std::size_t i = 0; i < in.pair_caps.size(); ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j && std::isfinite(in.pair_caps[i][j])) {
        network.set_pair_cap(static_cast<PeerId>(i), static_cast<PeerId>(j), in.pair_caps[i][j]);
      }
    }
  }
  std::vector<SimPeerSpec> specs(n);
  for (std::size_t i = 0; i < n; ++i) specs[i] = {"peer-" + std::to_string(i), in.peers[i].compute_sps};
  SimWorld world(engine, network, specs, 1);
  std::vector<std::unique_ptr<averaging::AveragingService>> services;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes;
  for (PeerId i = 0; i < n; ++i) {
    services.push_back(std::make_unique<averaging::AveragingService>(world.env(i)));
    muxes.push_back(std::make_unique<core::ServiceMux>());
    averaging::AveragingService* s = services.back().get();
    muxes.back()->add(core::ServiceId::Averaging, *s);
    world.env(i).set_sink(muxes.back().get());
  }

  averaging::RoleAssignment roles;
  roles.weights.assign(n, 0.0);
  roles.fractions.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    roles.weights[i] = plan.peers[i].computes ? 1.0 : 0.0;
    roles.fractions[i] = plan.peers[i].fraction;
  }
  roles.plan = plan;
  const averaging::RoundPlan round =
      averaging::make_round_plan(1, roles, length, core::codec::Codec::Fp32, part_bytes);
  RoundRun run;

  {
    averaging::PartHeader h;
    h.elements = static_cast<std::uint32_t>(round.elements_per_part());
    const core::Message m = averaging::encode_part(h, {}, /*virtual_payload=*/true);
    run.wire_per_payload = static_cast<double>(m.bytes.size() + m.virtual_bytes) /
                           static_cast<double>(m.virtual_bytes);
  }
  averaging::Timeouts patient;
  patient.sender = patient.reducer = std::numeric_limits<double>::infinity();
  run.members = round.size();
  double first = std::numeric_limits<double>::infinity(), last = 0;
  for (std::size_t m = 0; m < round.size(); ++m) {
    const PeerId p = round.members[m];
    services[p]->start_round(round, {}, patient, [&](const averaging::RoundOutcome& o) {
      run.completed += o.completed ? 1 : 0;
      first = std::min(first, o.started);
      last = std::max(last, o.finished);
    });
  }
  engine.run();
  run.seconds = last - first;
  return run;
}

TEST(PlannerRound, ButterflyRoundRunsAtTheAchievableRate) {
  int checked = 0, capped = 0, clients = 0, reducers_only = 0;
  double worst = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    const int n = 3 + static_cast<int>(seed % 10);
    planner::testing::CompositionOptions opt;
    opt.tiny_links = false;  // a 100 b/s link would need far finer parts to pipeline (see below)
    planner::PlannerInput in = planner::testing::random_composition(n, 9000 + seed, opt);
    // A vector of `length` fp32 elements is the gradient.
    const std::uint64_t length = 1u << 22;
    in.gradient_bits = 32.0 * static_cast<double>(length);
    planner::PlannerOptions options;
    if (seed % 3 == 2) options.roles = planner::Roles::AllComputeCapable;
    const planner::Plan plan = planner::solve(in, options);
    int computing = 0;
    double smallest = 1;
    for (const auto& p : plan.peers) {
      computing += p.computes ? 1 : 0;
      if (p.fraction > 0) smallest = std::min(smallest, p.fraction);
    }
    if (computing < 2 || !(plan.span_averaging_rate > 0)) continue;
    // A reducer starts returning a part once every sender's copy of it arrived, so a round lasts
    // about one part of the smallest span longer than the fluid ideal: parts of at most 1/200 of
    // it keep that within 0.5%. Rounds that would need parts under 2 KiB are skipped.
    const double smallest_bytes = smallest * static_cast<double>(length) * 4;
    const auto part_bytes = static_cast<std::uint64_t>(std::min(65536.0, smallest_bytes / 200));
    if (part_bytes < 2048) continue;
    const RoundRun run = run_round(in, plan, length, part_bytes);
    ASSERT_EQ(run.completed, run.members) << "seed " << seed;
    // Message headers travel too.
    const double ideal = plan.round_time_s * run.wire_per_payload;
    EXPECT_NEAR(run.seconds, ideal, 0.01 * ideal)
        << "seed " << seed << ", " << n << " peers, " << computing << " computing: " << plan.solver;
    worst = std::max(worst, std::abs(run.seconds / ideal - 1));
    ++checked;
    capped += in.pair_caps.empty() ? 0 : 1;
    for (std::size_t i = 0; i < in.peers.size(); ++i) {
      clients += in.peers[i].client_mode && plan.peers[i].computes ? 1 : 0;
      reducers_only += !plan.peers[i].computes && plan.peers[i].fraction > 0 ? 1 : 0;
    }
  }
  std::printf("rounds checked: %d (%d with pair caps; %d computing clients, %d reducers that do not "
              "compute); worst deviation from the plan's round time %.3f%%\n",
              checked, capped, clients, reducers_only, 100 * worst);
  EXPECT_GE(checked, 70);
  EXPECT_GE(capped, 25);
}

}  // namespace
}  // namespace swarmlab::sim
