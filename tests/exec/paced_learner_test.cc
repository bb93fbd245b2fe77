// PacedLearner: a micro-batch starts no earlier than the previous one's paced end, and the hold is
// set as a deadline, so a clock that moves while compute() runs (live mode) never turns it into a
// negative delay (which the event loop refuses: a peer of a live swarm once died of it).
#include "exec/paced_learner.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "support/memory_world.h"
#include "support/moving_clock_environment.h"
#include "support/timed_learner.h"

namespace swarmlab::exec {
namespace {

TEST(PacedLearner, HoldsMicroBatchesWhileTheClockMovesDuringTheCall) {
  constexpr double kStep = 1e-3;  // how far the clock moves per read
  // Paced lengths around a few reads' worth of clock: some hold ends fall between two reads of
  // one call, where a delay taken against the second read is negative.
  for (double reads = 0.5; reads <= 8.0; reads += 0.25) {
    SCOPED_TRACE("a micro-batch lasts " + std::to_string(reads) + " clock reads");
    const double seconds_per_sample = reads * kStep;
    // The device itself is far faster than the pace.
    core::testing::MemoryWorld world(1, core::testing::PeerSpec{0.01, 0, 1e9});
    core::testing::MovingClockEnvironment env(world.env(0), kStep);
    PacedLearner learner(env, std::make_unique<core::testing::TimedLearner>(env), 1.0 / seconds_per_sample);
    std::vector<double> done_at;
    const double first = env.now();
    for (int i = 0; i < 3; ++i) ASSERT_NO_THROW(learner.compute(1, [&] { done_at.push_back(env.now()); }));
    world.run();
    ASSERT_EQ(done_at.size(), 3u);
    // The third started no earlier than two paced lengths after the first.
    EXPECT_GE(done_at[2], first + 2 * seconds_per_sample);
  }
}

}  // namespace
}  // namespace swarmlab::exec
