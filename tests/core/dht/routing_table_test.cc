#include "core/dht/routing_table.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace swarmlab::core::dht {
namespace {

NodeId id_from_low(std::uint64_t low) {
  std::array<std::uint8_t, 20> b{};
  for (int i = 0; i < 8; ++i) b[19 - i] = static_cast<std::uint8_t>(low >> (8 * i));
  return NodeId::from_bytes(b);
}

// Ids in bucket 7 of self = 0: distances 128..255.
Contact in_bucket7(int i) { return Contact{id_from_low(128 + i), static_cast<PeerId>(100 + i)}; }

TEST(RoutingTable, AddsRefreshesAndIgnoresSelf) {
  RoutingTable t(id_from_low(0), 4, 4);
  EXPECT_EQ(t.update({id_from_low(0), 1}, 0).outcome, RoutingTable::Outcome::Ignored);
  EXPECT_EQ(t.update(in_bucket7(0), 1).outcome, RoutingTable::Outcome::Added);
  EXPECT_EQ(t.update(in_bucket7(1), 2).outcome, RoutingTable::Outcome::Added);
  EXPECT_EQ(t.size(), 2u);
  // Hearing from an entry again moves it to the most-recently-seen end, with its new address.
  EXPECT_EQ(t.update({in_bucket7(0).id, 55}, 3).outcome, RoutingTable::Outcome::Refreshed);
  const auto& entries = t.bucket(7).entries;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.front().contact, in_bucket7(1));
  EXPECT_EQ(entries.back().contact.peer, 55u);
  EXPECT_DOUBLE_EQ(entries.back().last_seen, 3);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.nonempty_buckets(), 1u);
}

TEST(RoutingTable, FullBucketPingsLeastRecentlySeenAndKeepsItIfItAnswers) {
  RoutingTable t(id_from_low(0), 4, 4);
  for (int i = 0; i < 4; ++i) t.update(in_bucket7(i), i);
  const auto r = t.update(in_bucket7(4), 10);
  EXPECT_EQ(r.outcome, RoutingTable::Outcome::Queued);
  ASSERT_TRUE(r.ping.has_value());
  EXPECT_EQ(*r.ping, in_bucket7(0));  // the least recently seen
  // While that ping is out, further newcomers queue without another ping.
  EXPECT_FALSE(t.update(in_bucket7(5), 11).ping.has_value());
  EXPECT_EQ(t.bucket(7).replacements.size(), 2u);
  // The old entry answers: it stays (old reliable peers are preferred), the newcomers wait.
  EXPECT_EQ(t.update(in_bucket7(0), 12).outcome, RoutingTable::Outcome::Refreshed);
  EXPECT_TRUE(t.contains(in_bucket7(0).id));
  EXPECT_FALSE(t.contains(in_bucket7(4).id));
  EXPECT_EQ(t.size(), 4u);
  // The next newcomer triggers a ping of the next least-recently-seen entry.
  const auto r2 = t.update(in_bucket7(6), 13);
  ASSERT_TRUE(r2.ping.has_value());
  EXPECT_EQ(*r2.ping, in_bucket7(1));
}

TEST(RoutingTable, FailedEntryIsReplacedByTheMostRecentNewcomer) {
  RoutingTable t(id_from_low(0), 4, 2);
  for (int i = 0; i < 4; ++i) t.update(in_bucket7(i), i);
  const auto r = t.update(in_bucket7(4), 10);
  t.update(in_bucket7(5), 11);
  t.update(in_bucket7(6), 12);  // the cache holds 2: in_bucket7(4) is dropped
  EXPECT_EQ(t.bucket(7).replacements.size(), 2u);
  ASSERT_TRUE(r.ping.has_value());
  EXPECT_TRUE(t.remove(r.ping->id));  // the ping failed
  EXPECT_FALSE(t.contains(in_bucket7(0).id));
  EXPECT_TRUE(t.contains(in_bucket7(6).id));
  EXPECT_FALSE(t.contains(in_bucket7(4).id));
  EXPECT_EQ(t.size(), 4u);
  EXPECT_FALSE(t.bucket(7).pinging.has_value());
  // Removing an unknown id does nothing; removing a queued candidate drops it from the cache.
  EXPECT_FALSE(t.remove(id_from_low(3)));
  EXPECT_TRUE(t.remove(in_bucket7(5).id));
  EXPECT_TRUE(t.bucket(7).replacements.empty());
}

TEST(RoutingTable, PingIntervalLimitsLivenessChecks) {
  RoutingTable t(id_from_low(0), 2, 4, /*ping_interval=*/60);
  t.update(in_bucket7(0), 0);
  t.update(in_bucket7(1), 0);
  // The least-recently-seen entry was heard from within the interval: no check needed.
  EXPECT_FALSE(t.update(in_bucket7(2), 30).ping.has_value());
  const auto r = t.update(in_bucket7(3), 61);
  ASSERT_TRUE(r.ping.has_value());
  t.update(*r.ping, 62);  // it answered
  // At most one check per bucket per interval.
  EXPECT_FALSE(t.update(in_bucket7(4), 100).ping.has_value());
  EXPECT_TRUE(t.update(in_bucket7(5), 122).ping.has_value());
}

TEST(RoutingTable, ClosestMatchesBruteForce) {
  Rng rng(17);
  for (int bits : {kKademliaIdBits, kHydraIdBits}) {
    const NodeId self = NodeId::random(rng, bits);
    RoutingTable t(self, 8, 0);
    std::vector<Contact> all;
    for (PeerId p = 0; p < 2000; ++p) {
      // Mix random ids with ids near self so low buckets are populated too.
      NodeId id = p % 2 ? NodeId::random(rng, bits) : random_id_in_bucket(self, static_cast<int>(rng.below(20)), rng, bits);
      if (t.contains(id)) continue;  // low buckets have few possible ids
      if (t.update({id, p}, 0).outcome == RoutingTable::Outcome::Added) all.push_back({id, p});
    }
    ASSERT_EQ(all.size(), t.size());
    for (int trial = 0; trial < 200; ++trial) {
      const NodeId target = trial % 3 == 0 ? self : (trial % 3 == 1 ? NodeId::random(rng, bits) : all[rng.below(all.size())].id);
      const std::size_t count = 1 + rng.below(30);
      const NodeId* exclude = trial % 2 ? &all[rng.below(all.size())].id : nullptr;
      std::vector<Contact> expected;
      for (const Contact& c : all)
        if (!exclude || c.id != *exclude) expected.push_back(c);
      std::sort(expected.begin(), expected.end(),
                [&](const Contact& a, const Contact& b) { return closer(target, a.id, b.id); });
      if (expected.size() > count) expected.resize(count);
      EXPECT_EQ(t.closest(target, count, exclude), expected) << "bits " << bits << " trial " << trial;
    }
  }
}

TEST(RoutingTable, StaleBucketsAreThoseNotLookedUp) {
  const NodeId self = id_from_low(0);
  RoutingTable t(self, 4, 0);
  t.update(in_bucket7(0), 0);  // a bucket's refresh clock starts when it comes into use
  t.update({id_from_low(1), 1}, 0);  // bucket 0
  EXPECT_TRUE(t.stale_buckets(100, 3600).empty());
  t.mark_looked_up(id_from_low(200), 3000);  // bucket 7
  EXPECT_EQ(t.stale_buckets(3600, 3600), std::vector<int>{0});
  EXPECT_EQ(t.stale_buckets(6600, 3600), (std::vector<int>{0, 7}));
  EXPECT_EQ(t.closest_bucket(), 0);
}

}  // namespace
}  // namespace swarmlab::core::dht
