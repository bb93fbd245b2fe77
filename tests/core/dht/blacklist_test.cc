#include "core/dht/blacklist.h"

#include <gtest/gtest.h>

namespace swarmlab::core::dht {
namespace {

TEST(Blacklist, BackoffDoublesWithEachConsecutiveFailure) {
  Blacklist bl(5, 2, 10);
  EXPECT_FALSE(bl.is_banned(1, 0));
  bl.register_failure(1, 0);  // first failure: 5 s
  EXPECT_TRUE(bl.is_banned(1, 4.9));
  EXPECT_FALSE(bl.is_banned(1, 5));
  bl.register_failure(1, 5);  // second: 10 s
  EXPECT_DOUBLE_EQ(bl.banned_until(1), 15);
  bl.register_failure(1, 15);  // third: 20 s
  EXPECT_DOUBLE_EQ(bl.banned_until(1), 35);
  EXPECT_EQ(bl.failures(1), 3);
  EXPECT_FALSE(bl.is_banned(2, 0));
}

TEST(Blacklist, FailuresWhileBannedDoNotCountAndSuccessClears) {
  Blacklist bl(5, 2, 10);
  bl.register_failure(7, 0);
  bl.register_failure(7, 1);  // still banned: the same episode
  EXPECT_EQ(bl.failures(7), 1);
  EXPECT_DOUBLE_EQ(bl.banned_until(7), 5);
  bl.register_success(7);
  EXPECT_FALSE(bl.is_banned(7, 2));
  EXPECT_EQ(bl.failures(7), 0);
  bl.register_failure(7, 3);  // back to the base ban
  EXPECT_DOUBLE_EQ(bl.banned_until(7), 8);
}

TEST(Blacklist, ExponentIsCappedAndOldEntriesForgotten) {
  Blacklist bl(5, 2, 3);
  Seconds t = 0;
  const double expected[] = {5, 10, 20, 40, 40, 40};
  for (double ban : expected) {
    bl.register_failure(3, t);
    EXPECT_DOUBLE_EQ(bl.banned_until(3) - t, ban);
    t = bl.banned_until(3);
  }
  bl.forget_older_than(t + 1);
  EXPECT_EQ(bl.size(), 0u);
}

TEST(Blacklist, ZeroBaseDisablesBanning) {
  Blacklist bl(0, 2, 10);
  bl.register_failure(1, 0);
  EXPECT_FALSE(bl.is_banned(1, 0));
}

}  // namespace
}  // namespace swarmlab::core::dht
