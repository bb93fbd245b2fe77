#include "core/training/compute_reward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace swarmlab::core::training {
namespace {

TEST(ComputeUnits, FollowHydrasSigmoid) {
  // As fast as the reference: half a unit per sample.
  EXPECT_DOUBLE_EQ(compute_units(0.5, 0.5, 100), 50);
  // One second per sample faster: sigmoid(1) per sample.
  EXPECT_NEAR(compute_units(1.5, 0.5, 10), 10 / (1 + std::exp(-1.0)), 1e-12);
  // Slower earns less, and never below zero.
  EXPECT_LT(compute_units(0.5, 1.5, 10), 5);
  EXPECT_GT(compute_units(0.5, 50, 10), 0);
  EXPECT_EQ(compute_units(0.5, 0.5, 0), 0);
  EXPECT_THROW(compute_units(0, 1, 1), std::invalid_argument);
  EXPECT_THROW(compute_units(1, -1, 1), std::invalid_argument);
  EXPECT_THROW(compute_units(1, INFINITY, 1), std::invalid_argument);
}

TEST(CoinLedger, KeepsEachPeersBalance) {
  CoinLedger ledger;
  ledger.credit_step(3, 1.0, 1.0, 10);
  ledger.credit_step(3, 1.0, 1.0, 6);
  ledger.credit_step(1, 2.0, 1.0, 4);
  EXPECT_DOUBLE_EQ(ledger.balance(3), 8);
  EXPECT_EQ(ledger.samples(3), 16u);
  EXPECT_NEAR(ledger.balance(1), 4 / (1 + std::exp(-1.0)), 1e-12);
  EXPECT_NEAR(ledger.total(), ledger.balance(1) + ledger.balance(3), 1e-12);
  EXPECT_EQ(ledger.balance(7), 0);
}

}  // namespace
}  // namespace swarmlab::core::training
