// The long sweep (label "slow", executable core_slow_tests): 20,000 randomized histories twice as
// long as the default test's, with the same faults and checks (see histories.h).
#include <gtest/gtest.h>

#include <cstdio>

#include "histories.h"

namespace swarmlab::core::raft {
namespace {

TEST(RaftHistoriesLong, TwentyThousandLongerHistories) {
  testing::HistorySpec spec;
  spec.workload = 6.0;
  spec.recovery = 3.0;
  const testing::SweepOutcome s = testing::run_sweep(1000001, 20000, spec);
  for (const auto& f : s.failures) ADD_FAILURE() << f;
  const auto& t = s.totals;
  std::printf(
      "%zu histories: %llu client ops, %llu crashes, %llu partitions, %llu leaders elected, %llu snapshots "
      "installed, %llu membership changes, %llu messages (%llu dropped, %llu duplicated)\n",
      s.histories, static_cast<unsigned long long>(t.ops), static_cast<unsigned long long>(t.crashes),
      static_cast<unsigned long long>(t.partitions), static_cast<unsigned long long>(t.leader_changes),
      static_cast<unsigned long long>(t.snapshots_installed), static_cast<unsigned long long>(t.membership_changes),
      static_cast<unsigned long long>(t.messages), static_cast<unsigned long long>(t.dropped),
      static_cast<unsigned long long>(t.duplicated));
}

}  // namespace
}  // namespace swarmlab::core::raft
