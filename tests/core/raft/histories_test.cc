// 1,000 randomized histories with crashes, partitions, loss, duplication and reordering (see
// histories.h): no safety violation, every history linearizable, and the group always recovers.
// The longer sweep is core_slow_tests (histories_slowtest.cc).
#include <gtest/gtest.h>

#include <cstdio>

#include "histories.h"

namespace swarmlab::core::raft {
namespace {

TEST(RaftHistories, ThousandRandomizedHistoriesAreSafeAndLinearizable) {
  testing::HistorySpec spec;
  const testing::SweepOutcome s = testing::run_sweep(1, 1000, spec);
  for (const auto& f : s.failures) ADD_FAILURE() << f;
  EXPECT_EQ(s.histories, 1000u);
  const auto& t = s.totals;
  std::printf(
      "%zu histories: %llu client ops (%llu completed), %llu crashes, %llu partitions, %llu leaders elected, %llu "
      "snapshots installed, %llu membership changes, %llu messages (%llu dropped, %llu duplicated)\n",
      s.histories, static_cast<unsigned long long>(t.ops), static_cast<unsigned long long>(t.completed),
      static_cast<unsigned long long>(t.crashes), static_cast<unsigned long long>(t.partitions),
      static_cast<unsigned long long>(t.leader_changes), static_cast<unsigned long long>(t.snapshots_installed),
      static_cast<unsigned long long>(t.membership_changes), static_cast<unsigned long long>(t.messages),
      static_cast<unsigned long long>(t.dropped), static_cast<unsigned long long>(t.duplicated));
  EXPECT_GT(t.crashes, 1000u);
  EXPECT_GT(t.partitions, 1000u);
  EXPECT_GT(t.snapshots_installed, 100u);
  EXPECT_GT(t.membership_changes, 50u);
}

}  // namespace
}  // namespace swarmlab::core::raft
