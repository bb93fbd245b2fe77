#include "core/tracker/watchdog.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "tracker_world.h"

namespace swarmlab::core::tracker {
namespace {

using testing::TrackerWorld;
using testing::TrackerWorldOptions;

TrackerWorldOptions watched(std::uint64_t seed) {
  TrackerWorldOptions o;
  o.seed = seed;
  return o;
}

// The replicas of the leader's configuration, and the learner being caught up if any.
std::vector<PeerId> replicas_of(TrackerWorld& w) {
  const PeerId leader = *w.leader();
  std::vector<PeerId> all = w.replica(leader)->node()->config().members;
  if (auto learner = w.replica(leader)->node()->learner()) all.push_back(*learner);
  return all;
}

TEST(TrackerWatchdog, TheCreatorTellsAWholeGroupLossAndTheRebootedGroupServesIt) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    TrackerWorld w(watched(seed));
    ASSERT_TRUE(w.run_until_leader(5.0)) << "seed " << seed;
    TrackerBackup& backup = w.start_backup(0.5);
    bool lost = false;
    TrackerWatchdog dog(w.net().env(w.creator_peer()), w.creator(), WatchdogOptions{5, 1}, [&] { lost = true; });
    dog.start();
    w.net().run_for(4.0);
    EXPECT_FALSE(lost) << "seed " << seed;
    ASSERT_TRUE(backup.latest()) << "seed " << seed;

    for (PeerId p : replicas_of(w)) w.lose(p);
    const Seconds gone = w.now();
    while (!lost && w.now() < gone + 15) w.net().run_for(0.05);
    ASSERT_TRUE(lost) << "seed " << seed;
    // At most lost_after after the last answer, plus the check period and a probe's wait.
    EXPECT_LE(w.now() - gone, 5 + 1 + 1.0) << "seed " << seed;
    EXPECT_GE(w.now() - gone, 4.0) << "seed " << seed;

    backup.stop();
    ASSERT_TRUE(w.reboot(*backup.latest()).ok) << "seed " << seed;
    lost = false;
    dog.rearm();
    ASSERT_TRUE(w.run_until_settled(w.now() + 20)) << "seed " << seed;
    const std::uint64_t probes = dog.probes();
    w.net().run_for(10.0);
    EXPECT_FALSE(lost) << "seed " << seed << ": the rebooted group was taken for lost";
    EXPECT_GT(dog.probes(), probes) << "seed " << seed;  // its Queries are answered
  }
}

TEST(TrackerWatchdog, LosingAMinorityIsNotALoss) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    TrackerWorld w(watched(seed));
    ASSERT_TRUE(w.run_until_leader(5.0)) << "seed " << seed;
    bool lost = false;
    TrackerWatchdog dog(w.net().env(w.creator_peer()), w.creator(), WatchdogOptions{5, 1}, [&] { lost = true; });
    dog.start();
    w.net().run_for(2.0);
    w.lose(*w.leader());  // one of three, the leader: an election, then a replacement
    w.net().run_for(20.0);
    EXPECT_FALSE(lost) << "seed " << seed;
    EXPECT_TRUE(w.leader()) << "seed " << seed;
  }
}

TEST(TrackerWatchdog, RejectsNonPositiveTimes) {
  TrackerWorld w(watched(1));
  EXPECT_THROW(TrackerWatchdog(w.net().env(w.creator_peer()), w.creator(), WatchdogOptions{0, 1}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(TrackerWatchdog(w.net().env(w.creator_peer()), w.creator(), WatchdogOptions{5, 0}, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::tracker
