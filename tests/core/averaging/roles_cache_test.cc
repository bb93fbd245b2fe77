// The roles cache (core/averaging/roles_cache.h): planned roles do not depend on the group's order.
#include "core/averaging/roles_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace swarmlab::core::averaging
