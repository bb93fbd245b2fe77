// The planner with relayed routes (docs/trust.md §4): client-mode peers aggregate when relays
// connect them, and the executed split never asks a relay for more than its links carry.
#include <gtest/gtest.h>

#include "core/averaging/role_assignment.h"
#include "core/planner/planner.h"

namespace swarmlab::core::planner {
namespace {

constexpr double kMbps = 1e6;

// 3 public peers and 7 in client mode; every pair of clients goes through relay 0, which is
// public peer 0 (a member) unless `outside_relay_bps` > 0 gives an outside relay with that link.
PlannerInput composition(bool relays, double outside_relay_bps = 0) {
  PlannerInput in;
  for (int i = 0; i < 3; ++i) in.peers.push_back({10, 20 * kMbps, 20 * kMbps, false});
  for (int i = 0; i < 7; ++i) in.peers.push_back({10, 100 * kMbps, 40 * kMbps, true});
  in.gradient_bits = 8e6;
  in.target_batch = 100;
  if (!relays) return in;
  in.relays.push_back(outside_relay_bps > 0 ? RelayLink{outside_relay_bps, outside_relay_bps, std::nullopt}
                                            : RelayLink{20 * kMbps, 20 * kMbps, 0});
  in.routes.assign(10, std::vector<int>(10, kDirect));
  for (int i = 3; i < 10; ++i)
    for (int j = 3; j < 10; ++j)
      if (i != j) in.routes[i][j] = 0;
  return in;
}

PlannerOptions averaging_only() {
  PlannerOptions o;
  o.roles = Roles::AllComputeCapable;
  o.objective = Objective::AveragingOnly;
  return o;
}

double relay_bits_per_s(const PlannerInput& in, const Plan& plan) {
  std::vector<bool> computes;
  std::vector<double> f;
  for (const auto& p : plan.peers) computes.push_back(p.computes), f.push_back(p.fraction);
  return relay_loads(in, computes, f)[0] * in.gradient_bits * plan.span_averaging_rate;
}

TEST(RelayedRoutes, ClientsAggregateOnlyWhenEveryComputingPeerReachesThem) {
  PlannerInput in = composition(false);
  EXPECT_FALSE(can_aggregate(in, 5));
  EXPECT_TRUE(can_aggregate(in, 1));
  in = composition(true);
  EXPECT_TRUE(can_aggregate(in, 5));
  in.routes[4][5] = kUnreachable;
  EXPECT_FALSE(can_aggregate(in, 5));
  EXPECT_FALSE(can_aggregate(in, 4));
  EXPECT_TRUE(can_aggregate(in, 6));
}

TEST(RelayedRoutes, AFastOutsideRelayLetsClientsAggregateAndSpeedsUpTheRound) {
  const Plan alone = solve(composition(false), averaging_only());
  const PlannerInput in = composition(true, 1000 * kMbps);
  const Plan relayed = solve(in, averaging_only());
  double client_share = 0;
  for (int i = 3; i < 10; ++i) client_share += relayed.peers[i].fraction;
  EXPECT_GT(client_share, 0.3);
  EXPECT_GT(relayed.span_averaging_rate, 1.5 * alone.span_averaging_rate);
  EXPECT_LE(relay_bits_per_s(in, relayed), 1000 * kMbps * (1 + 1e-6));
}

TEST(RelayedRoutes, ASlowOutsideRelayCapsWhatClientsAggregate) {
  const Plan alone = solve(composition(false), averaging_only());
  const PlannerInput in = composition(true, 2 * kMbps);
  const Plan relayed = solve(in, averaging_only());
  EXPECT_LE(relay_bits_per_s(in, relayed), 2 * kMbps * (1 + 1e-6));
  // Never worse than client mode alone: the split may leave the clients out.
  EXPECT_GE(relayed.span_averaging_rate, alone.span_averaging_rate * (1 - 1e-6));
}

TEST(RelayedRoutes, AMemberRelayCarriesItsOwnShareAndTheRelayedTraffic) {
  const PlannerInput in = composition(true);
  const Plan plan = solve(in, averaging_only());
  const int m = 10;
  const double own = (1 - plan.peers[0].fraction) + plan.peers[0].fraction * (m - 1);
  const double load_bps = (own * in.gradient_bits) * plan.span_averaging_rate + relay_bits_per_s(in, plan);
  EXPECT_LE(load_bps, 20 * kMbps * (1 + 1e-6));
}

TEST(RelayedRoutes, AllReduceGivesReachableClientsEqualShares) {
  const auto roles = averaging::assign_roles(averaging::Strategy::AllReduce, composition(true));
  for (double f : roles.fractions) EXPECT_DOUBLE_EQ(f, 0.1);
  const auto alone = averaging::assign_roles(averaging::Strategy::AllReduce, composition(false));
  EXPECT_DOUBLE_EQ(alone.fractions[0], 1.0 / 3);
  EXPECT_EQ(alone.fractions[5], 0.0);
  // The round's predicted time counts the relay's load: peer 0 relays 42 client pairs' traffic.
  const double with_relay = averaging::predicted_round_seconds(roles, composition(true), 1000000, codec::Codec::Fp32);
  PlannerInput unrelayed = composition(true);
  unrelayed.relays[0] = RelayLink{1e12, 1e12, std::nullopt};
  EXPECT_GT(with_relay, averaging::predicted_round_seconds(roles, unrelayed, 1000000, codec::Codec::Fp32));
}

TEST(RelayedRoutes, BadRoutesAreRejected) {
  PlannerInput in = composition(true);
  in.routes[3][4] = 5;
  EXPECT_THROW(solve(in, averaging_only()), std::invalid_argument);
  in = composition(true);
  in.routes.pop_back();
  EXPECT_THROW(solve(in, averaging_only()), std::invalid_argument);
  in = composition(true);
  in.relays[0].member = 12;
  EXPECT_THROW(solve(in, averaging_only()), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::planner
