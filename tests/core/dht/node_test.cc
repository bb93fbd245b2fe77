#include "core/dht/node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/service_ids.h"
#include "support/memory_world.h"

namespace swarmlab::core::dht {
namespace {

// The core's memory world with 0.05 s between any two peers, recording every message sent.
struct DhtWorld : core::testing::MemoryWorld {
  struct Sent {
    PeerId from, to;
    std::vector<std::uint8_t> bytes;
  };
  explicit DhtWorld(std::size_t peers, Seconds latency = 0.05)
      : MemoryWorld(peers, core::testing::PeerSpec{latency / 2}, /*seed=*/7) {}
  void record() {
    on_send = [this](PeerId from, PeerId to, const Message& m) { sent.push_back({from, to, m.bytes}); };
  }
  // Loudly (a crash: its contacts hear of it, and connections to it are refused) or silently.
  void take_down(PeerId p, bool silent = false) { set_down(p, silent ? Departure::Silent : Departure::Crash); }
  std::vector<Sent> sent;
};

Bytes b(std::string_view s) { return Bytes(s.begin(), s.end()); }

// n DHT nodes in the memory world; node 0 starts alone and the others join through it one by one.
struct Network {
  explicit Network(std::size_t n, DhtConfig config = {}, Seconds latency = 0.05) : world(n, latency), bits(config.id_bits) {
    for (PeerId i = 0; i < n; ++i) {
      nodes.push_back(std::make_unique<DhtNode>(world.env(i), NodeId::random(world.env(i).rng(), bits), config));
      world.env(i).set_sink(nodes.back().get());
    }
    std::size_t joined = 0;
    for (PeerId i = 0; i < n; ++i) {
      nodes[i]->bootstrap(i == 0 ? std::vector<PeerId>{} : std::vector<PeerId>{0}, [&](bool) { ++joined; });
      world.run_for(0.5);
    }
    world.run_for(30);
    EXPECT_EQ(joined, n);
  }

  StoreResult store(PeerId by, std::string_view key, std::string_view value, Seconds ttl = 600) {
    std::optional<StoreResult> out;
    nodes[by]->store(key, b(value), world.now() + ttl, [&](const StoreResult& r) { out = r; });
    world.run_for(30);
    EXPECT_TRUE(out.has_value());
    return out.value_or(StoreResult{});
  }

  std::pair<std::optional<Record>, LookupStats> get(PeerId by, std::string_view key, GetOptions options = {}) {
    bool done = false;
    std::pair<std::optional<Record>, LookupStats> out;
    nodes[by]->get(key, [&](std::optional<Record> r, const LookupStats& s) {
      done = true;
      out = {std::move(r), s};
    }, options);
    world.run_for(30);
    EXPECT_TRUE(done);
    return out;
  }

  // Nodes holding `key`, and the `count` live nodes truly closest to it.
  std::vector<PeerId> holders(std::string_view key) {
    std::vector<PeerId> out;
    for (PeerId i = 0; i < nodes.size(); ++i)
      if (world.is_up(i) && nodes[i]->storage().find(NodeId::of_key(key, bits), world.now())) out.push_back(i);
    return out;
  }
  std::vector<PeerId> closest(std::string_view key, std::size_t count) {
    const NodeId target = NodeId::of_key(key, bits);
    std::vector<PeerId> all;
    for (PeerId i = 0; i < nodes.size(); ++i)
      if (world.is_up(i)) all.push_back(i);
    std::sort(all.begin(), all.end(),
              [&](PeerId a, PeerId c) { return closer(target, nodes[a]->id(), nodes[c]->id()); });
    all.resize(std::min(count, all.size()));
    std::sort(all.begin(), all.end());
    return all;
  }

  DhtWorld world;
  int bits;  // id width
  std::vector<std::unique_ptr<DhtNode>> nodes;
};

// 50 peers store 20 keys, each on exactly the 5 nodes closest to it, and read them back in at most
// 3 hops.
void fifty_peers_store_and_get(DhtConfig config, std::uint64_t seed) {
  Network net(50, config);
  for (PeerId i = 0; i < 50; ++i) {
    EXPECT_GT(net.nodes[i]->routing_table().size(), 10u) << i;
    EXPECT_TRUE(net.nodes[i]->id().fits(config.id_bits)) << i;
  }
  Rng rng(seed);
  for (int k = 0; k < 20; ++k) {
    const std::string key = "key-" + std::to_string(k);
    const StoreResult s = net.store(static_cast<PeerId>(rng.below(50)), key, "value-" + std::to_string(k));
    EXPECT_TRUE(s.ok);
    EXPECT_EQ(s.replicas, 5u);
    // The value sits on exactly the 5 nodes closest to the key (hashed at the DHT's width).
    EXPECT_EQ(net.holders(key), net.closest(key, 5)) << key;
    auto [record, stats] = net.get(static_cast<PeerId>(rng.below(50)), key);
    ASSERT_TRUE(record.has_value()) << key;
    EXPECT_EQ(record->value().value, b("value-" + std::to_string(k)));
    EXPECT_LE(stats.hops, 3);
  }
  auto [missing, stats] = net.get(3, "never stored");
  EXPECT_FALSE(missing.has_value());
  EXPECT_GT(stats.requests, 0);
}

TEST(DhtNode, FiftyPeersStoreAndGet) { fifty_peers_store_and_get(DhtConfig{}, 99); }

// Hydra's DHT (docs/hydra.md §1): 256-bit ids and SHA-256 keys, through the same code.
TEST(DhtNode, HydraIdsOf256BitsStoreAndGet) {
  DhtConfig hydra = hydra_dht_config();
  EXPECT_EQ(hydra.id_bits, kHydraIdBits);
  fifty_peers_store_and_get(hydra, 98);
  Rng rng(1);
  EXPECT_GT(NodeId::random(rng, kHydraIdBits).highest_bit(), 159);  // (fails with probability 2^-96)
}

TEST(DhtNode, AWidthIsOneOfTwoAndNodesOfDifferentWidthsIgnoreEachOther) {
  core::testing::MemoryWorld world(2, core::testing::PeerSpec{0.01}, 3);
  DhtConfig bad;
  bad.id_bits = 128;
  EXPECT_THROW(DhtNode(world.env(0), NodeId(), bad), std::invalid_argument);
  Rng rng(5);
  const NodeId wide = NodeId::random(rng, kHydraIdBits);
  EXPECT_THROW(DhtNode(world.env(0), wide, DhtConfig{}), std::invalid_argument);  // id wider than 160 bits

  DhtConfig hydra;
  hydra.id_bits = kHydraIdBits;
  DhtNode narrow_node(world.env(0), NodeId::random(rng), DhtConfig{});
  DhtNode wide_node(world.env(1), wide, hydra);
  EXPECT_THROW(narrow_node.find_nodes(wide, [](std::vector<Contact>, const LookupStats&) {}), std::invalid_argument);
  // A ping of either width is malformed to the other and changes nothing.
  DhtMessage ping;
  ping.kind = MessageKind::PingRequest;
  ping.sender = NodeId::random(rng);
  EXPECT_FALSE(wide_node.receive(0, encode(ping)));
  ping.id_bits = kHydraIdBits;
  ping.sender = NodeId::random(rng, kHydraIdBits);
  EXPECT_FALSE(narrow_node.receive(1, encode(ping)));
  EXPECT_TRUE(wide_node.receive(0, encode(ping)));
  EXPECT_EQ(narrow_node.stats().dropped_malformed, 1u);
  EXPECT_EQ(wide_node.stats().dropped_malformed, 1u);
  EXPECT_EQ(narrow_node.routing_table().size(), 0u);
  EXPECT_EQ(wide_node.routing_table().size(), 1u);
}

TEST(DhtNode, NumReplicasIsHonoured) {
  DhtConfig config;
  config.num_replicas = 3;
  Network net(30, config);
  EXPECT_EQ(net.store(4, "k", "v").replicas, 3u);
  EXPECT_EQ(net.holders("k"), net.closest("k", 3));
}

TEST(DhtNode, NewestExpirationWinsAcrossTheNetwork) {
  Network net(30);
  net.store(1, "k", "new", 600);
  const StoreResult older = net.store(2, "k", "old", 300);
  EXPECT_FALSE(older.ok);  // every replica holds a newer version
  EXPECT_EQ(net.get(5, "k").first->value().value, b("new"));
  // After expiration the key is gone.
  net.world.run_for(700);
  EXPECT_FALSE(net.get(5, "k").first.has_value());
}

// docs/trust.md §2: a peer that stores key after key fills only its share of each replica's
// store, and the others' stores still land. Without the share, the flood filled every store and
// the honest peer's progress record was refused everywhere.
TEST(DhtNode, APeerStoringWithoutEndLeavesRoomForEveryoneElse) {
  DhtConfig config;
  config.max_stored_bytes = 64 * (32 + 1000);  // exactly 64 of the entries below (record.h)
  config.max_stored_bytes_per_publisher = 8 * 1024;
  Network net(4, config);  // every node is one of every key's 5 replicas
  const std::string blob(1000, 'x');
  for (int k = 0; k < 200; ++k) {
    net.nodes[1]->store("junk-" + std::to_string(k), b(blob), net.world.now() + 600, [](const StoreResult&) {});
  }
  net.world.run_for(30);
  for (PeerId p : {0u, 2u, 3u}) {
    EXPECT_LE(net.nodes[p]->storage().bytes(), 8u * 1024) << p;
    EXPECT_GT(net.nodes[p]->storage().refused_over_publisher_limit(), 150u) << p;
  }
  const StoreResult honest = net.store(2, "progress", "step 7");
  EXPECT_TRUE(honest.ok);
  // Node 1 filled its own store itself (a node's own stores are bounded by the whole store only).
  EXPECT_EQ(honest.replicas, 3u);
  EXPECT_EQ(net.holders("progress"), (std::vector<PeerId>{0, 2, 3}));
}

TEST(DhtNode, DictionaryGathersSubkeysFromManyPeers) {
  Network net(30);
  for (PeerId p = 0; p < 10; ++p) {
    bool ok = false;
    net.nodes[p]->store("progress", b("peer" + std::to_string(p)), b("step" + std::to_string(p)),
                        net.world.now() + 60, [&](const StoreResult& r) { ok = r.ok; });
    net.world.run_for(5);
    EXPECT_TRUE(ok);
  }
  auto [record, stats] = net.get(20, "progress", GetOptions{3});
  ASSERT_TRUE(record.has_value());
  ASSERT_TRUE(record->is_dictionary());
  EXPECT_EQ(record->dictionary().size(), 10u);
  EXPECT_EQ(record->dictionary().at(b("peer3")).value, b("step3"));
  // Subkeys expire one by one: refresh one of them, then let the rest lapse.
  net.world.run_for(30);
  net.nodes[3]->store("progress", b("peer3"), b("step3b"), net.world.now() + 60, [](const StoreResult&) {});
  net.world.run_for(35);
  auto [later, s2] = net.get(21, "progress", GetOptions{3});
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->dictionary().size(), 1u);
  EXPECT_EQ(later->dictionary().at(b("peer3")).value, b("step3b"));
}

TEST(DhtNode, LookupSurvivesDeadPeers) {
  Network net(50);
  net.store(7, "k", "v");
  const std::vector<PeerId> replicas = net.holders("k");
  ASSERT_EQ(replicas.size(), 5u);
  // Three replicas vanish silently (only timeouts notice), one refuses connections, and ten more
  // nodes die too.
  for (int i = 0; i < 3; ++i) net.world.take_down(replicas[i], /*silent=*/true);
  net.world.take_down(replicas[3]);
  int killed = 0;
  for (PeerId p = 1; p < 50 && killed < 10; ++p)
    if (p != 7 && std::find(replicas.begin(), replicas.end(), p) == replicas.end() && p != 30) {
      net.world.take_down(p, p % 2);
      ++killed;
    }
  auto [record, stats] = net.get(30, "k");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->value().value, b("v"));
  // And a store after the failures still reaches five live replicas.
  const StoreResult s = net.store(30, "k2", "v2");
  EXPECT_EQ(s.replicas, 5u);
  EXPECT_EQ(net.holders("k2"), net.closest("k2", 5));
}

TEST(DhtNode, FailingPeerIsEvictedAndBanned) {
  Network net(20);
  DhtNode& a = *net.nodes[0];
  const RoutingTable::Entry* victim_entry = nullptr;
  a.routing_table().for_each([&](const RoutingTable::Entry& e) {
    if (!victim_entry) victim_entry = &e;
  });
  ASSERT_NE(victim_entry, nullptr);
  const Contact victim = victim_entry->contact;
  net.world.take_down(victim.peer, /*silent=*/true);
  bool done = false;
  a.find_nodes(victim.id, [&](std::vector<Contact>, const LookupStats&) { done = true; });
  net.world.run_for(2.9);
  EXPECT_TRUE(a.routing_table().contains(victim.id));  // not yet timed out
  net.world.run_for(0.2);
  EXPECT_FALSE(a.routing_table().contains(victim.id));
  EXPECT_TRUE(a.blacklist().is_banned(victim.peer, net.world.now()));  // for 5 s
  EXPECT_GE(a.stats().requests_failed, 1u);
  net.world.run_for(10);
  EXPECT_TRUE(done);
  EXPECT_FALSE(a.blacklist().is_banned(victim.peer, net.world.now()));
}

// A read of a key nobody holds asks every one of the closest nodes, so a node stopped with its
// connection open holds it up for the request timeout - unless another service (an averaging
// round that dropped it by a timeout) already found it unresponsive: then its pending request fails
// at once and later reads skip it while it is banned. A message from it lifts the ban.
TEST(DhtNode, ASuspectedPeerNoLongerHoldsReadsUp) {
  Network net(5);
  const PeerId silent = 2;
  net.world.take_down(silent, /*silent=*/true);
  // Starts a read by node 1 of a key nobody stored; `took` gets its duration.
  const auto read = [&](std::optional<Seconds>& took) {
    const Seconds start = net.world.now();
    net.nodes[1]->get("nobody stored this", [&took, &net, start](std::optional<Record> r, const LookupStats&) {
      EXPECT_FALSE(r.has_value());
      took = net.world.now() - start;
    });
  };
  std::optional<Seconds> suspected_mid_read, while_banned, unsuspected;
  read(suspected_mid_read);
  net.world.run_for(1);
  EXPECT_FALSE(suspected_mid_read.has_value());
  net.nodes[1]->suspect(silent);  // its pending request fails now
  net.world.run_for(0.5);
  ASSERT_TRUE(suspected_mid_read.has_value());
  EXPECT_LT(*suspected_mid_read, 1.2);
  EXPECT_TRUE(net.nodes[1]->blacklist().is_banned(silent, net.world.now()));
  net.nodes[1]->routing_table().for_each([&](const RoutingTable::Entry& e) { EXPECT_NE(e.contact.peer, silent); });
  read(while_banned);
  net.world.run_for(0.5);
  ASSERT_TRUE(while_banned.has_value());
  EXPECT_LT(*while_banned, 0.5);
  // Once the ban ends, the same read waits out the 3 s request timeout again (the other nodes still
  // list it: they did not suspect it).
  net.world.run_for(10);
  read(unsuspected);
  net.world.run_for(2.9);
  EXPECT_FALSE(unsuspected.has_value());
  net.world.run_for(0.5);
  ASSERT_TRUE(unsuspected.has_value());
  EXPECT_GE(*unsuspected, 3.0);
}

TEST(DhtNode, BootstrapReportsFailureWhenNoInitialPeerAnswers) {
  DhtWorld world(3);
  world.take_down(1);
  world.take_down(2, /*silent=*/true);
  DhtNode node(world.env(0), NodeId::of_key("n"));
  world.env(0).set_sink(&node);
  std::optional<bool> result;
  node.bootstrap({1, 2, 0}, [&](bool ok) { result = ok; });
  world.run_for(10);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(*result);
}

// A single node and a raw peer that speaks bytes to it.
struct Probe {
  Probe() : world(2) {
    node = std::make_unique<DhtNode>(world.env(0), NodeId::of_key("node"));
    world.env(0).set_sink(node.get());
    world.record();
    world.run_until(100);
  }
  std::vector<std::uint8_t> ping(Seconds sender_time, std::uint64_t request_id = 1) {
    DhtMessage m;
    m.kind = MessageKind::PingRequest;
    m.request_id = request_id;
    m.sender = NodeId::of_key("probe");
    m.sender_time = sender_time;
    return encode(m);
  }
  std::size_t replies() const {
    return std::count_if(world.sent.begin(), world.sent.end(), [](const auto& s) { return s.from == 0; });
  }
  DhtWorld world;
  std::unique_ptr<DhtNode> node;
};

TEST(DhtNode, ClockSkewBeyondToleranceIsRejected) {
  Probe p;
  EXPECT_FALSE(p.node->receive(1, p.ping(104)));
  EXPECT_FALSE(p.node->receive(1, p.ping(96.5)));
  EXPECT_EQ(p.node->stats().dropped_clock_skew, 2u);
  p.world.run_for(1);
  EXPECT_EQ(p.replies(), 0u);
  EXPECT_FALSE(p.node->routing_table().contains(NodeId::of_key("probe")));
  EXPECT_TRUE(p.node->receive(1, p.ping(p.world.now() + 2.9)));
  p.world.run_for(1);
  EXPECT_EQ(p.replies(), 1u);
  EXPECT_TRUE(p.node->routing_table().contains(NodeId::of_key("probe")));
}

TEST(DhtNode, MalformedAndUnexpectedMessagesAreDroppedHarmlessly) {
  Probe p;
  const std::vector<std::uint8_t> garbage{1, 2, 3};
  EXPECT_FALSE(p.node->receive(1, garbage));
  EXPECT_FALSE(p.node->receive(1, std::vector<std::uint8_t>{}));
  auto trailing = p.ping(p.world.now());
  trailing.push_back(0);
  EXPECT_FALSE(p.node->receive(1, trailing));
  EXPECT_EQ(p.node->stats().dropped_malformed, 3u);
  // A reply nobody asked for.
  DhtMessage pong;
  pong.kind = MessageKind::PingResponse;
  pong.request_id = 42;
  pong.sender = NodeId::of_key("probe");
  pong.sender_time = p.world.now();
  EXPECT_FALSE(p.node->receive(1, encode(pong)));
  EXPECT_EQ(p.node->stats().dropped_unexpected, 1u);
  // A message claiming to come from the node itself.
  DhtMessage self = pong;
  self.kind = MessageKind::PingRequest;
  self.sender = p.node->id();
  EXPECT_FALSE(p.node->receive(1, encode(self)));
  p.world.run_for(1);
  EXPECT_EQ(p.replies(), 0u);
  // The node still works, through the Service interface too.
  p.node->handle(1, Message{p.ping(p.world.now()), 0});
  p.world.run_for(1);
  EXPECT_EQ(p.replies(), 1u);
  const auto& reply = p.world.sent.back();
  EXPECT_EQ(peek_service(reply.bytes), ServiceId::Dht);
  EXPECT_EQ(decode(reply.bytes, WireLimits{}).kind, MessageKind::PingResponse);
}

TEST(DhtNode, ReplyFromTheWrongPeerIsIgnored) {
  DhtWorld world(3);
  DhtNode node(world.env(0), NodeId::of_key("n"));
  world.env(0).set_sink(&node);
  world.record();
  node.bootstrap({1}, [](bool) {});
  world.run_for(0.01);
  ASSERT_EQ(world.sent.size(), 1u);
  const DhtMessage ping = decode(world.sent[0].bytes, WireLimits{});
  DhtMessage pong;
  pong.kind = MessageKind::PingResponse;
  pong.request_id = ping.request_id;
  pong.sender = NodeId::of_key("impostor");
  pong.sender_time = world.now();
  EXPECT_FALSE(node.receive(2, encode(pong)));  // sent to 1, "answered" by 2
  EXPECT_EQ(node.stats().dropped_unexpected, 1u);
  EXPECT_TRUE(node.receive(1, encode(pong)));
}

TEST(DhtNode, LocalReplicaAnswersWithoutHops) {
  Network net(10);
  net.store(0, "k", "v");
  const PeerId holder = net.holders("k").front();
  auto [record, stats] = net.get(holder, "k");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(stats.hops, 0);
  EXPECT_EQ(stats.requests, 0);
}

TEST(DhtNode, CountsTraffic) {
  Network net(10);
  std::uint64_t sent = 0, received = 0;
  for (const auto& n : net.nodes) {
    sent += n->stats().messages_sent;
    received += n->stats().messages_received;
    EXPECT_GT(n->stats().bytes_sent, n->stats().messages_sent * 30);
  }
  EXPECT_GT(sent, 0u);
  EXPECT_EQ(sent, received);  // nothing is lost in the memory world (no faults set)
}

// docs/interpretations.md §27: a read that merges two replicas asks for what it still needs once
// the first answer holding the value came back, instead of keeping α requests in flight. Since
// §30 it also waits for the two closest nodes it knows, so a read whose first answers came from
// farther replicas asks one more.
TEST(DhtNode, AReadOfTwoReplicasAsksLittleMoreThanItsFirstRound) {
  // The same 20 reads, narrowed and with α in flight to the end.
  auto reads = [](bool narrow) {
    DhtConfig config;
    config.narrow_value_lookups = narrow;
    Network net(40, config);
    for (PeerId p = 0; p < 6; ++p) {
      net.nodes[p]->store("progress", b("peer" + std::to_string(p)), b("x"), net.world.now() + 600,
                          [](const StoreResult&) {});
      net.world.run_for(2);
    }
    GetOptions two;
    two.sufficient_responses = 2;
    std::vector<int> requests;
    for (PeerId reader = 10; reader < 30; ++reader) {
      auto [record, stats] = net.get(reader, "progress", two);
      EXPECT_TRUE(record.has_value());
      if (record) EXPECT_EQ(record->dictionary().size(), 6u);
      requests.push_back(stats.requests);
    }
    return requests;
  };
  const std::vector<int> narrowed = reads(true), wide = reads(false);
  int total_narrowed = 0, total_wide = 0;
  for (std::size_t k = 0; k < narrowed.size(); ++k) {
    EXPECT_LE(narrowed[k], static_cast<int>(DhtConfig{}.parallelism) + 1) << "read " << k;
    total_narrowed += narrowed[k];
    total_wide += wide[k];
  }
  EXPECT_LT(total_narrowed, total_wide);
}

// docs/interpretations.md §30: a collaboration whose peers all start at the same moment. Every
// node joins through node 0 at once, so each learns first of the few that answered quickly, and
// whole subtrees of the id space began unaware of each other; every peer then publishes its entry
// in one dictionary and reads it back, merging two replicas, as progress records are. Each read
// must find every entry: one that stops at the first copies it meets, or a routing table that
// never learned the nodes nearest the key, sees only the entries written on its side.
TEST(DhtNode, PeersThatJoinTogetherReadEveryEntryOfADictionary) {
  constexpr std::size_t kPeers = 256;
  DhtWorld world(kPeers, /*latency=*/0.01);
  std::vector<std::unique_ptr<DhtNode>> nodes;
  for (PeerId i = 0; i < kPeers; ++i) {
    nodes.push_back(std::make_unique<DhtNode>(world.env(i), NodeId::random(world.env(i).rng(), kKademliaIdBits), DhtConfig{}));
    world.env(i).set_sink(nodes.back().get());
  }
  std::size_t joined = 0;
  // Each publishes at once, as a peer reports its progress when it starts, and again every 2 s.
  auto publish = [&] {
    for (PeerId i = 0; i < kPeers; ++i)
      nodes[i]->store("progress", b("peer" + std::to_string(i)), b("x"), world.now() + 600, [](const StoreResult&) {});
  };
  for (PeerId i = 0; i < kPeers; ++i)
    nodes[i]->bootstrap(i == 0 ? std::vector<PeerId>{} : std::vector<PeerId>{0}, [&](bool ok) { joined += ok ? 1 : 0; });
  publish();
  for (int round = 0; round < 5; ++round) {
    world.run_for(2);
    publish();
  }
  world.run_for(2);
  EXPECT_EQ(joined, kPeers - 1);  // node 0 had nobody to join
  // Kademlia's routing works when every node knows some node in every bucket's range that holds
  // any: a bucket left empty hides that whole subtree from the node's lookups.
  for (PeerId i = 0; i < kPeers; ++i) {
    std::vector<bool> exists(kKademliaIdBits, false);
    for (PeerId j = 0; j < kPeers; ++j)
      if (j != i) exists[bucket_index(nodes[i]->id(), nodes[j]->id())] = true;
    for (int bucket = 0; bucket < kKademliaIdBits; ++bucket)
      if (exists[bucket]) EXPECT_FALSE(nodes[i]->routing_table().bucket(bucket).entries.empty()) << "node " << i << ", bucket " << bucket;
  }
  GetOptions two;
  two.sufficient_responses = 2;
  std::vector<std::size_t> seen(kPeers, 0);
  for (PeerId i = 0; i < kPeers; ++i)
    nodes[i]->get("progress", [&seen, i](std::optional<Record> r, const LookupStats&) {
      seen[i] = r && r->is_dictionary() ? r->dictionary().size() : 0;
    }, two);
  world.run_for(5);
  for (PeerId i = 0; i < kPeers; ++i) EXPECT_EQ(seen[i], kPeers) << "reader " << i;
}

// docs/interpretations.md §28: a store within store_lookup_reuse_s of a lookup of the same key
// goes straight to the replicas that lookup found - no FIND_NODE - and still lands on exactly the
// closest nodes. Once the routing table changed, or the period passed, it looks them up again.
TEST(DhtNode, AStoreReusesTheReplicasItsLastLookupFound) {
  Network net(30);
  DhtNode& writer = *net.nodes[4];
  const auto finds = [&] { return writer.stats().find_requests; };
  const auto publish = [&](std::string_view value) {
    std::optional<StoreResult> out;
    writer.store("progress", b("me"), b(value), net.world.now() + 600, [&](const StoreResult& r) { out = r; });
    net.world.run_for(2);
    EXPECT_TRUE(out && out->ok);
    return out.value_or(StoreResult{});
  };
  std::uint64_t before = finds();
  EXPECT_EQ(publish("1").replicas, 5u);
  EXPECT_GT(finds(), before);  // the first store looks its replicas up
  for (int i = 2; i <= 5; ++i) {
    before = finds();
    const StoreResult r = publish(std::to_string(i));
    EXPECT_EQ(finds(), before) << "store " << i;
    EXPECT_EQ(r.replicas, 5u);
    EXPECT_EQ(r.lookup.requests, 0);
  }
  EXPECT_EQ(net.holders("progress"), net.closest("progress", 5));
  for (PeerId p : net.closest("progress", 5))
    if (p != 4) EXPECT_EQ(net.nodes[p]->storage().find(NodeId::of_key("progress"), net.world.now())->dictionary().at(b("me")).value, b("5"));

  // Past the period: a lookup again.
  net.world.run_for(DhtConfig{}.store_lookup_reuse_s);
  before = finds();
  publish("6");
  EXPECT_GT(finds(), before);

  // A replica fails (its connections refused). The store that finds out replaces it with the next
  // closest node its lookup heard from, if any; the failure took the node out of the routing
  // table, so the next store looks up again and reaches the five closest live nodes.
  const std::vector<PeerId> replicas = net.closest("progress", 5);
  const PeerId gone = replicas[0] == 4 ? replicas[1] : replicas[0];
  net.world.take_down(gone);
  EXPECT_GE(publish("7").replicas, 4u);
  before = finds();
  const std::uint64_t failed_before = writer.stats().requests_failed;
  EXPECT_EQ(publish("8").replicas, 5u);
  EXPECT_GT(finds(), before);
  EXPECT_EQ(writer.stats().requests_failed, failed_before);
  EXPECT_EQ(net.holders("progress"), net.closest("progress", 5));
}

// The case that needs the routing-table rule: the first node of a collaboration stores while it
// knows nobody (its replica set: itself). Once others have joined, its next store must look them
// up and reach them, not reuse the empty set.
TEST(DhtNode, AStoreLooksUpAgainOnceTheRoutingTableChanged) {
  DhtWorld world(6);
  std::vector<std::unique_ptr<DhtNode>> nodes;
  for (PeerId i = 0; i < 6; ++i) {
    nodes.push_back(std::make_unique<DhtNode>(world.env(i), NodeId::random(world.env(i).rng()), DhtConfig{}));
    world.env(i).set_sink(nodes.back().get());
  }
  nodes[0]->bootstrap({}, [](bool) {});
  std::optional<StoreResult> first;
  nodes[0]->store("progress", b("v1"), world.now() + 600, [&](const StoreResult& r) { first = r; });
  world.run_for(1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->replicas, 1u);  // itself: it knows nobody
  for (PeerId i = 1; i < 6; ++i) {
    nodes[i]->bootstrap({0}, [](bool) {});
    world.run_for(0.5);
  }
  world.run_for(5);
  const std::uint64_t before = nodes[0]->stats().find_requests;
  std::optional<StoreResult> second;
  nodes[0]->store("progress", b("v2"), world.now() + 600, [&](const StoreResult& r) { second = r; });
  world.run_for(1);
  ASSERT_TRUE(second);
  EXPECT_GT(nodes[0]->stats().find_requests, before);
  EXPECT_EQ(second->replicas, 5u);
}

// docs/interpretations.md §28: a replica that answers late while it keeps talking (busy behind a
// round's gradient parts on the same connection) stays in the routing table, so the table's
// version alone does not tell the writer that its set is short of it. A set from a lookup that
// some node failed to answer is used once, and a store that a replica failed drops the set: the
// next store looks up again and that replica gets the record. Kept without it, readers that reach
// that replica read a record from before it was slow.
TEST(DhtNode, AStoreLooksUpAgainAfterAReplicaWasSlowToAnswer) {
  Network net(30);
  const std::vector<PeerId> replicas = net.closest("progress", 5);
  PeerId writer = 0;
  while (std::find(replicas.begin(), replicas.end(), writer) != replicas.end()) ++writer;
  net.nodes[writer]->set_liveness([&](PeerId) { return net.world.now(); });  // everyone keeps talking
  const auto publish = [&](std::string_view value) {
    std::optional<StoreResult> out;
    net.nodes[writer]->store("progress", b("me"), b(value), net.world.now() + 600, [&](const StoreResult& r) { out = r; });
    net.world.run_for(4);
    EXPECT_TRUE(out && out->ok) << value;
  };
  const auto holds = [&](PeerId replica, std::string_view value) {
    const Record* r = net.nodes[replica]->storage().find(NodeId::of_key("progress"), net.world.now());
    return r && r->dictionary().count(b("me")) && r->dictionary().at(b("me")).value == b(value);
  };
  const PeerId slow = replicas.front();
  publish("0");
  net.world.run_for(DhtConfig{}.store_lookup_reuse_s);
  // The routing table stays as it is from here: the slow replica is not dropped from it.
  const std::uint64_t table = net.nodes[writer]->routing_table().version();

  // The lookup of the first store finds the slow replica unanswering.
  net.world.set_blocked_one_way(writer, slow, true);
  publish("1");
  net.world.set_blocked_one_way(writer, slow, false);
  EXPECT_EQ(net.nodes[writer]->routing_table().version(), table);  // busy, not dropped
  EXPECT_FALSE(holds(slow, "1"));
  publish("2");
  EXPECT_TRUE(holds(slow, "2"));

  // A store to the reused set that the slow replica fails.
  publish("3");  // reuses the set of the lookup of "2"
  net.world.set_blocked_one_way(writer, slow, true);
  publish("4");
  net.world.set_blocked_one_way(writer, slow, false);
  EXPECT_EQ(net.nodes[writer]->routing_table().version(), table);
  EXPECT_TRUE(holds(slow, "3"));
  publish("5");
  for (PeerId p : replicas) EXPECT_TRUE(holds(p, "5")) << p;
}

// A request sent before a read narrowed can be older than slow_request_s by the time the first
// answer holding the value arrives (here: 1.2 s round trips, a replica gone silently): the read
// must go on, not schedule its next wake-up in the past.
TEST(DhtNode, ANarrowedReadWithARequestAlreadySlowFinishes) {
  DhtConfig narrowed;
  narrowed.narrow_value_lookups = true;
  Network net(30, narrowed, /*latency=*/0.6);
  for (PeerId p = 0; p < 4; ++p) {
    net.nodes[p]->store("progress", b("peer" + std::to_string(p)), b("x"), net.world.now() + 600,
                        [](const StoreResult&) {});
    net.world.run_for(10);
  }
  const std::vector<PeerId> replicas = net.closest("progress", 5);
  net.world.take_down(replicas.front(), /*silent=*/true);
  GetOptions two;
  two.sufficient_responses = 2;
  for (PeerId reader = 10; reader < 20; ++reader) {
    if (std::find(replicas.begin(), replicas.end(), reader) != replicas.end()) continue;
    auto [record, stats] = net.get(reader, "progress", two);
    ASSERT_TRUE(record.has_value()) << reader;
    EXPECT_EQ(record->dictionary().size(), 4u);
  }
}

}  // namespace
}  // namespace swarmlab::core::dht
