// The roles cache (core/averaging/roles_cache.h): planned roles do not depend on the group's order;
// an input its members share is looked up once.
#include "core/averaging/roles_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/rng.h"

namespace swarmlab::core::averaging {
namespace {

// Six peers of three kinds (alike within a kind), ALBERT-like: an LP with many optima.
planner::PlannerInput peers_in(const std::vector<int>& kinds) {
  planner::PlannerInput input;
  for (int kind : kinds) {
    const double bps = kind == 0 ? 200e6 : kind == 1 ? 100e6 : 50e6;
    input.peers.push_back({kind == 2 ? 0.0 : 12.0, bps, bps / 2, false});
  }
  input.target_batch = 4096;
  input.gradient_bits = 16.0 * 17.8e6;
  return input;
}

TEST(RolesCache, PlannedRolesFollowTheMembersWhateverTheGroupOrder) {
  const std::vector<int> kinds = {0, 0, 1, 1, 2, 2, 1, 0};
  std::vector<std::size_t> order(kinds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  RolesCache cache;
  const RoleAssignment* reference = cache.roles(Strategy::Planned, peers_in(kinds));
  ASSERT_NE(reference, nullptr);
  // What each kind gets, in canonical order: the same multiset of fractions per kind, whatever
  // the order.
  auto per_kind = [&](const RoleAssignment& roles, const std::vector<int>& ks) {
    std::vector<std::vector<double>> out(3);
    for (std::size_t i = 0; i < ks.size(); ++i) out[static_cast<std::size_t>(ks[i])].push_back(roles.fractions[i]);
    for (auto& v : out) std::sort(v.begin(), v.end());
    return out;
  };
  const auto expected = per_kind(*reference, kinds);
  Rng rng(5, 1);
  for (int orders = 0; orders < 40; ++orders) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    std::vector<int> shuffled;
    for (std::size_t i : order) shuffled.push_back(kinds[i]);
    const RoleAssignment* roles = cache.roles(Strategy::Planned, peers_in(shuffled));
    ASSERT_NE(roles, nullptr);
    EXPECT_EQ(per_kind(*roles, shuffled), expected) << "order " << orders;
    double sum = 0;
    for (double f : roles->fractions) sum += f;
    EXPECT_NEAR(sum, 1.0, 1e-9);
    ASSERT_TRUE(roles->plan.has_value());
    for (std::size_t i = 0; i < shuffled.size(); ++i) EXPECT_EQ(roles->plan->peers[i].fraction, roles->fractions[i]);
  }
  // One solve served every order.
  EXPECT_EQ(cache.solves(), 1u);
}

// Every member of a group builds the same plan: built once per round, and for the same group again
// (a static collaboration) only its round id changes. Its pacing matrix is shared, not copied.
TEST(RolesCache, RoundPlansAreBuiltOncePerGroupAndReusedWithTheNextRoundId) {
  RolesCache cache;
  const planner::PlannerInput input = peers_in({0, 1, 2, 1});
  const RoleAssignment* roles = cache.roles(Strategy::Planned, input);
  ASSERT_NE(roles, nullptr);
  const std::vector<PeerId> members{10, 11, 12, 13};
  int builds = 0;
  const auto plan_for = [&](std::uint64_t round_id, const std::vector<PeerId>& who) {
    return cache.round_plan(round_id, *roles, who, 1000, codec::Codec::Fp32, kDefaultPartBytes, [&] {
      ++builds;
      return make_round_plan(round_id, *roles, 1000, codec::Codec::Fp32);
    });
  };
  const RoundPlan first = plan_for(5, members);
  const RoundPlan again = plan_for(5, members);
  EXPECT_EQ(builds, 1);
  const RoundPlan next = plan_for(6, members);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(next.round_id, 6u);
  EXPECT_EQ(first.round_id, 5u);
  EXPECT_EQ(next.span_begin, first.span_begin);
  EXPECT_EQ(next.weights, first.weights);
  ASSERT_TRUE(first.paced());
  EXPECT_EQ(next.pace_bps, first.pace_bps);  // the same matrix
  EXPECT_EQ(again.pace_bps, first.pace_bps);
  // Other members (here, another order): built again.
  const RoundPlan other = plan_for(7, {13, 12, 11, 10});
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(other.round_id, 7u);
  const std::uint64_t generation = cache.generation();
  EXPECT_EQ(cache.roles(Strategy::Planned, input), roles);  // same input, same entry
  EXPECT_EQ(cache.generation(), generation);
}

TEST(RolesCache, ASharedInputIsLookedUpOnceAndAnswersLikeItsValue) {
  RolesCache cache;
  const auto input = std::make_shared<const planner::PlannerInput>(peers_in({0, 1, 2, 1}));
  const RoleAssignment* found = cache.roles(Strategy::Planned, input);
  ASSERT_NE(found, nullptr);
  const std::uint64_t hits = cache.hits();
  EXPECT_EQ(cache.roles(Strategy::Planned, input), found);
  EXPECT_EQ(cache.hits(), hits + 1);
  // The same value by reference and in another shared object: the same entry.
  EXPECT_EQ(cache.roles(Strategy::Planned, *input), found);
  EXPECT_EQ(cache.roles(Strategy::Planned, std::make_shared<const planner::PlannerInput>(*input)), found);
  // Another strategy for the same shared input is another entry, not the last answer.
  EXPECT_NE(cache.roles(Strategy::AllReduce, input), found);
  EXPECT_EQ(cache.roles(Strategy::Planned, input), found);
}

}  // namespace
}  // namespace swarmlab::core::averaging
