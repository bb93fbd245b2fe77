#include "core/dht/record.h"

#include <gtest/gtest.h>

#include "core/dht/value_store.h"
#include "core/rng.h"

namespace swarmlab::core::dht {
namespace {

Bytes b(std::string_view s) { return Bytes(s.begin(), s.end()); }
const NodeId kKey = NodeId::of_key("k");

TEST(ValueStore, NewerExpirationWins) {
  ValueStore s(100, 1 << 20);
  EXPECT_TRUE(s.store(kKey, nullptr, {b("v1"), 10}, 0));
  EXPECT_FALSE(s.store(kKey, nullptr, {b("old"), 5}, 0));   // older: rejected
  EXPECT_FALSE(s.store(kKey, nullptr, {b("tie"), 10}, 0));  // a tie keeps what is held
  EXPECT_TRUE(s.store(kKey, nullptr, {b("v1"), 10}, 0));    // the same version is acknowledged
  ASSERT_NE(s.find(kKey, 0), nullptr);
  EXPECT_EQ(s.find(kKey, 0)->value().value, b("v1"));
  EXPECT_TRUE(s.store(kKey, nullptr, {b("v2"), 20}, 0));
  EXPECT_EQ(s.find(kKey, 0)->value(), (TimedValue{b("v2"), 20}));
}

TEST(ValueStore, ExpiredValuesAreRejectedDroppedOnReadAndPurged) {
  ValueStore s(100, 1 << 20);
  EXPECT_FALSE(s.store(kKey, nullptr, {b("v"), 5}, 5));  // already expired
  EXPECT_TRUE(s.store(kKey, nullptr, {b("v"), 10}, 0));
  EXPECT_NE(s.find(kKey, 9.9), nullptr);
  EXPECT_EQ(s.find(kKey, 10), nullptr);  // expiration is exclusive
  EXPECT_EQ(s.size(), 0u);               // and the read dropped it

  const NodeId other = NodeId::of_key("other");
  s.store(kKey, nullptr, {b("v"), 20}, 0);
  s.store(other, nullptr, {b("w"), 40}, 0);
  s.purge(25);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_NE(s.find(other, 25), nullptr);
  // A refreshed key is not purged at its old expiration.
  s.store(other, nullptr, {b("w2"), 80}, 30);
  s.purge(50);
  EXPECT_EQ(s.size(), 1u);
  s.purge(80);
  EXPECT_EQ(s.size(), 0u);
}

TEST(ValueStore, SubkeysHaveTheirOwnExpirations) {
  ValueStore s(100, 1 << 20);
  const Bytes alice = b("alice"), bob = b("bob");
  EXPECT_TRUE(s.store(kKey, &alice, {b("a1"), 10}, 0));
  EXPECT_TRUE(s.store(kKey, &bob, {b("b1"), 30}, 0));
  EXPECT_FALSE(s.store(kKey, &alice, {b("a0"), 5}, 0));  // older for this subkey
  EXPECT_TRUE(s.store(kKey, &alice, {b("a2"), 20}, 0));
  const Record* r = s.find(kKey, 0);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->is_dictionary());
  EXPECT_EQ(r->dictionary().size(), 2u);
  EXPECT_EQ(r->dictionary().at(alice), (TimedValue{b("a2"), 20}));
  EXPECT_DOUBLE_EQ(r->expiration(), 30);
  // alice expires first; the dictionary lives on with bob.
  r = s.find(kKey, 25);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->dictionary().size(), 1u);
  EXPECT_EQ(r->dictionary().count(bob), 1u);
  EXPECT_EQ(s.find(kKey, 30), nullptr);
}

TEST(ValueStore, PlainValuesAndDictionariesReplaceEachOtherOnlyWhenNewer) {
  ValueStore s(100, 1 << 20);
  const Bytes sub = b("s");
  s.store(kKey, nullptr, {b("plain"), 20}, 0);
  EXPECT_FALSE(s.store(kKey, &sub, {b("x"), 20}, 0));  // not newer than the plain value
  EXPECT_TRUE(s.store(kKey, &sub, {b("x"), 25}, 0));   // newer: becomes a dictionary
  EXPECT_TRUE(s.find(kKey, 0)->is_dictionary());
  EXPECT_FALSE(s.store(kKey, nullptr, {b("plain2"), 25}, 0));  // must beat every subkey
  EXPECT_TRUE(s.store(kKey, nullptr, {b("plain2"), 26}, 0));
  EXPECT_FALSE(s.find(kKey, 0)->is_dictionary());
}

TEST(ValueStore, LimitsRejectWithoutChangingWhatIsHeld) {
  ValueStore s(1, 300);
  EXPECT_TRUE(s.store(kKey, nullptr, {b("v"), 10}, 0));
  EXPECT_FALSE(s.store(NodeId::of_key("second"), nullptr, {b("v"), 10}, 0));  // key limit
  EXPECT_FALSE(s.store(kKey, nullptr, {Bytes(500, 1), 20}, 0));                // record size limit
  EXPECT_EQ(s.find(kKey, 0)->value().value, b("v"));
  const Bytes big_sub(150, 2);
  EXPECT_TRUE(s.store(kKey, &big_sub, {b("x"), 30}, 0));
  const Bytes another(100, 3);
  EXPECT_FALSE(s.store(kKey, &another, {b("y"), 30}, 0));  // would push the dictionary past 300 B
  EXPECT_EQ(s.find(kKey, 0)->dictionary().size(), 1u);
}

// docs/trust.md §2: one sender's entries may take only its share of the store, so a flood of
// stores from one peer leaves room for everyone else's; the share comes back as its entries expire
// or are replaced, and the node's own stores are not charged to anyone.
TEST(ValueStore, OnePublisherCannotFillTheStoreForEveryoneElse) {
  ValueStore s(1000, 4096, 16 * 1024, PublisherLimits{8 * 1024, 3});
  const PeerId flooder = 1, honest = 2;
  std::size_t accepted = 0;
  for (int k = 0; k < 100; ++k)
    accepted += s.store(NodeId::of_key(std::string("k").append(std::to_string(k))), nullptr, {Bytes(1000, 1), 10}, 0, flooder);
  EXPECT_EQ(accepted, 3u);  // the entry limit
  EXPECT_EQ(s.publishers().entries_of(flooder), 3u);
  EXPECT_EQ(s.refused_over_publisher_limit(), 97u);
  // Its own entries it may replace, even at its limit.
  EXPECT_TRUE(s.store(NodeId::of_key("k0"), nullptr, {Bytes(1000, 2), 20}, 0, flooder));
  // Everyone else still stores.
  EXPECT_TRUE(s.store(kKey, nullptr, {b("mine"), 10}, 0, honest));
  const Bytes sub = b("honest");
  EXPECT_TRUE(s.store(NodeId::of_key("progress"), &sub, {b("step 7"), 10}, 0, honest));
  EXPECT_EQ(s.publishers().entries_of(honest), 2u);
  // A store of one of the flooder's keys by another peer (a newer version) is charged to that peer.
  EXPECT_TRUE(s.store(NodeId::of_key("k1"), nullptr, {b("newer"), 15}, 0, honest));
  EXPECT_EQ(s.publishers().entries_of(flooder), 2u);
  EXPECT_TRUE(s.store(NodeId::of_key("k50"), nullptr, {Bytes(1000, 1), 10}, 0, flooder));
  // A byte limit too: 3 entries of 1 KiB and a fourth of 2 KiB would pass 4 KiB.
  ValueStore by_bytes(1000, 4096, 64 * 1024, PublisherLimits{4 * 1024, 100});
  for (int k = 0; k < 3; ++k)
    EXPECT_TRUE(by_bytes.store(NodeId::of_key(std::string("b").append(std::to_string(k))), nullptr, {Bytes(1000, 1), 10}, 0, flooder));
  EXPECT_FALSE(by_bytes.store(NodeId::of_key("b3"), nullptr, {Bytes(2000, 1), 10}, 0, flooder));
  EXPECT_TRUE(by_bytes.store(NodeId::of_key("b3"), nullptr, {Bytes(900, 1), 10}, 0, flooder));
  // The node's own stores are bounded by the whole store's limits only.
  for (int k = 0; k < 5; ++k)
    EXPECT_TRUE(s.store(NodeId::of_key(std::string("own").append(std::to_string(k))), nullptr, {Bytes(1000, 3), 10}, 0));
  // Once the flooder's entries expire, its share is free again.
  s.purge(10);
  EXPECT_EQ(s.publishers().entries_of(flooder), 1u);  // k0, stored again until 20
  EXPECT_EQ(s.publishers().entries_of(honest), 1u);   // k1, until 15
  EXPECT_TRUE(s.store(NodeId::of_key("k60"), nullptr, {Bytes(1000, 1), 30}, 10, flooder));
}

// The merge rules sweep entries away: a plain value over a dictionary takes every subkey's charge
// with it, and a subkey over a plain value the plain value's.
TEST(ValueStore, EntriesSweptAwayByAMergeAreNoLongerTheirPublishers) {
  ValueStore s(1000, 4096, SIZE_MAX, PublisherLimits{SIZE_MAX, 10});
  for (PeerId p = 1; p <= 3; ++p) {
    const Bytes sub = b("peer" + std::to_string(p));
    EXPECT_TRUE(s.store(kKey, &sub, {b("x"), 10}, 0, p));
  }
  EXPECT_EQ(s.publishers().publishers(), 3u);
  EXPECT_TRUE(s.store(kKey, nullptr, {b("plain"), 20}, 0, 4));
  EXPECT_EQ(s.publishers().publishers(), 1u);
  EXPECT_EQ(s.publishers().entries_of(4), 1u);
  const Bytes sub = b("peer5");
  EXPECT_TRUE(s.store(kKey, &sub, {b("y"), 30}, 0, 5));
  EXPECT_EQ(s.publishers().entries_of(4), 0u);
  EXPECT_EQ(s.publishers().entries_of(5), 1u);
  EXPECT_TRUE(s.store(kKey, &sub, {b("z"), 40}, 0));  // the node's own version: nobody's
  EXPECT_EQ(s.publishers().publishers(), 0u);
}

// Whatever mix of plain values, subkeys, publishers, versions and expirations arrives, every live
// entry is charged to exactly one publisher, at its footprint, and nothing else is charged: a
// charge that outlived its entry would count against an honest peer until the entry's expiration.
TEST(ValueStore, EveryLiveEntryIsChargedOnceAndNothingElse) {
  Rng rng(11);
  ValueStore s(1000, 1 << 20, SIZE_MAX, PublisherLimits{SIZE_MAX, SIZE_MAX});
  std::vector<NodeId> keys;
  for (int k = 0; k < 4; ++k) keys.push_back(NodeId::of_key(std::string("key").append(std::to_string(k))));
  Seconds now = 0;
  for (int op = 0; op < 3000; ++op) {
    now += rng.uniform();
    const Bytes sub = b(std::string("s").append(std::to_string(rng.below(5))));
    const TimedValue v{Bytes(rng.below(40), 1), now + 1 + 20 * rng.uniform()};
    s.store(keys[rng.below(keys.size())], rng.bernoulli(0.3) ? nullptr : &sub, v, now,
            static_cast<PeerId>(1 + rng.below(4)));
    if (op % 10 != 0) continue;
    s.purge(now);
    std::size_t live = 0, footprints = 0;
    for (const NodeId& key : keys) {
      const Record* r = s.find(key, now);
      if (!r) continue;
      if (!r->is_dictionary()) {
        ++live;
        footprints += entry_footprint(nullptr, r->value());
        continue;
      }
      for (const auto& [subkey, value] : r->dictionary()) {
        ++live;
        footprints += entry_footprint(&subkey, value);
      }
    }
    std::size_t charged = 0, charged_bytes = 0;
    for (PeerId p = 1; p <= 4; ++p) {
      charged += s.publishers().entries_of(p);
      charged_bytes += s.publishers().bytes_of(p);
    }
    ASSERT_EQ(charged, live) << "after " << op + 1 << " stores";
    ASSERT_EQ(charged_bytes, footprints) << "after " << op + 1 << " stores";
  }
}

TEST(ValueStore, TheBytesOfAllRecordsTogetherAreBoundedAndGiveBackWhatExpires) {
  // Many keys of 1 KiB each: however many peers send them, the node holds at most 10 KiB.
  ValueStore s(1000, 4096, 10 * 1024);
  std::size_t accepted = 0;
  for (int k = 0; k < 100; ++k)
    accepted += s.store(NodeId::of_key(std::string("k").append(std::to_string(k))), nullptr, {Bytes(1024, 1), 10}, 0);
  EXPECT_GE(accepted, 8u);
  EXPECT_LT(accepted, 10u);
  EXPECT_LE(s.bytes(), 10u * 1024);
  // A dictionary growing past what is left is refused, and nothing it held changes.
  const Bytes sub = b("s");
  EXPECT_FALSE(s.store(kKey, &sub, {Bytes(4000, 2), 10}, 0));
  // Once they expire, the space is free again.
  s.purge(10);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.bytes(), 0u);
  EXPECT_TRUE(s.store(kKey, &sub, {Bytes(3000, 2), 20}, 10));
  const std::size_t one = s.bytes();
  const Bytes other = b("t");
  EXPECT_TRUE(s.store(kKey, &other, {Bytes(10, 3), 15}, 10));
  EXPECT_GT(s.bytes(), one);
  EXPECT_NE(s.find(kKey, 16), nullptr);  // subkey "t" expired on read: its bytes are given back
  EXPECT_EQ(s.bytes(), one);
}

TEST(Record, MergeCombinesReplicasSubkeyBySubkey) {
  Record a(Dictionary{{b("x"), {b("x1"), 10}}, {b("y"), {b("y2"), 30}}});
  const Record other(Dictionary{{b("x"), {b("x2"), 20}}, {b("y"), {b("y1"), 15}}, {b("z"), {b("z1"), 5}}});
  a.merge(other);
  EXPECT_EQ(a.dictionary().size(), 3u);
  EXPECT_EQ(a.dictionary().at(b("x")).value, b("x2"));
  EXPECT_EQ(a.dictionary().at(b("y")).value, b("y2"));
  Record plain(TimedValue{b("p"), 5});
  plain.merge(Record(TimedValue{b("q"), 6}));
  EXPECT_EQ(plain.value().value, b("q"));
}

}  // namespace
}  // namespace swarmlab::core::dht

namespace swarmlab::core::dht {
namespace {

// What a record computes from its whole content, written out here.
std::size_t footprint_of(const Record& r) {
  if (!r.is_dictionary()) return 32 + r.value().value.size();
  std::size_t bytes = 32;
  for (const auto& [subkey, v] : r.dictionary()) bytes += 32 + subkey.size() + v.value.size();
  return bytes;
}

// The footprint and the expiry bound are kept up to date through every kind of change rather than
// recomputed (a dictionary written by thousands of peers must not cost O(n) per store or read):
// after a long random history they still agree with the content.
TEST(Record, KeepsItsFootprintAndExpiryUpToDateThroughEveryChange) {
  Rng rng(7);
  Record r;
  for (int step = 0; step < 5000; ++step) {
    const Seconds now = step * 0.01;
    const Bytes subkey{static_cast<std::uint8_t>(rng.below(40))};
    const TimedValue v{Bytes(rng.below(5), 1), now + static_cast<double>(rng.below(300)) * 0.01};
    switch (rng.below(10)) {
      case 0: r.merge_plain(v); break;
      case 1: {
        Record other(Dictionary{{subkey, v}});
        r.merge(other);
        break;
      }
      case 2: r.drop_expired(now); break;
      default: r.merge_subkey(subkey, v);
    }
    ASSERT_EQ(r.footprint(), footprint_of(r)) << step;
    // Nothing expired at `now` may survive a drop, and nothing live may be dropped.
    Record copy = r;
    copy.drop_expired(now);
    if (copy.is_dictionary())
      for (const auto& [k, held] : r.dictionary()) ASSERT_EQ(copy.dictionary().contains(k), held.expiration > now) << step;
  }
}

}  // namespace
}  // namespace swarmlab::core::dht
