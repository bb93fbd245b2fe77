// Newcomers join Hydra's DHT through the bootstrap server (docs/hydra.md §2): each gets its id
// from the server and the peers closest to it, and bootstraps its routing table from them.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dht/config.h"
#include "core/dht/node.h"
#include "core/service_mux.h"
#include "core/tracker/bootstrap_client.h"
#include "core/tracker/bootstrap_server.h"
#include "support/memory_world.h"

namespace swarmlab::core::tracker {
namespace {

using core::testing::MemoryWorld;

struct Newcomer {
  Newcomer(MemoryWorld& net, PeerId p) : client(net.env(p), 0, 0.2, 20) {
    mux.add(ServiceId::Bootstrap, client);
    net.env(p).set_sink(&mux);
  }
  BootstrapClient client;
  std::unique_ptr<dht::DhtNode> node;
  ServiceMux mux;
};

TEST(BootstrapDht, NewcomersFillTheirRoutingTablesFromTheServer) {
  constexpr PeerId kPeers = 40;  // and the server at peer 0
  MemoryWorld net(kPeers + 1, core::testing::PeerSpec{0.01}, 17);
  net.set_faults({0.02, 0.01, 0.001, 0.02, false});
  BootstrapServer server(net.env(0), 5);
  net.env(0).set_sink(&server);
  std::vector<std::unique_ptr<Newcomer>> peers;
  // One at a time, each asks for its id, then for the 20 peers closest to it, and joins through them.
  for (PeerId p = 1; p <= kPeers; ++p) {
    peers.push_back(std::make_unique<Newcomer>(net, p));
    Newcomer& n = *peers.back();
    std::optional<std::optional<dht::NodeId>> id;
    n.client.assign_id([&](std::optional<dht::NodeId> got) { id = got; });
    while (!id) net.run_for(0.01);
    ASSERT_TRUE(*id) << p;
    n.node = std::make_unique<dht::DhtNode>(net.env(p), **id, dht::hydra_dht_config(20));
    n.mux.add(ServiceId::Dht, *n.node);
    std::optional<std::optional<std::vector<PeerId>>> contacts;
    n.client.find_peers(20, [&](std::optional<std::vector<PeerId>> got) { contacts = got; });
    while (!contacts) net.run_for(0.01);
    ASSERT_TRUE(*contacts) << p;
    EXPECT_EQ((*contacts)->size(), std::min<std::size_t>(p - 1, 20)) << p;  // everyone before it, up to 20
    for (PeerId c : **contacts) EXPECT_NE(c, p);
    if (p == 1) continue;  // the first has nobody to join through
    std::optional<bool> joined;
    n.node->bootstrap(**contacts, [&](bool ok) { joined = ok; });
    while (!joined) net.run_for(0.01);
    EXPECT_TRUE(*joined) << p;
  }
  net.run_for(5.0);
  // Every peer knows others, and a value stored by the last newcomer is found by the first peer.
  for (const auto& n : peers) EXPECT_GT(n->node->routing_table().size(), 0u);
  std::optional<bool> stored;
  peers.back()->node->store("dataset/fashion-mnist", dht::Bytes{1, 2, 3}, net.now() + 600,
                            [&](const dht::StoreResult& r) { stored = r.ok; });
  while (!stored) net.run_for(0.01);
  EXPECT_TRUE(*stored);
  std::optional<std::optional<dht::Record>> got;
  peers.front()->node->get("dataset/fashion-mnist",
                           [&](std::optional<dht::Record> r, const dht::LookupStats&) { got = std::move(r); });
  while (!got) net.run_for(0.01);
  ASSERT_TRUE(*got);
}

TEST(BootstrapDht, APeerWithoutAnIdIsGivenNoPeers) {
  MemoryWorld net(3, core::testing::PeerSpec{0.01}, 1);
  BootstrapServer server(net.env(0), 5);
  net.env(0).set_sink(&server);
  server.directory().assign_id(2);
  BootstrapClient client(net.env(1), 0);
  net.env(1).set_sink(&client);
  std::optional<std::optional<std::vector<PeerId>>> contacts;
  client.find_peers(5, [&](std::optional<std::vector<PeerId>> got) { contacts = got; });
  while (!contacts) net.run_for(0.01);
  ASSERT_TRUE(*contacts);
  EXPECT_TRUE((*contacts)->empty());
  EXPECT_THROW(client.find_peers(0, nullptr), std::invalid_argument);
  EXPECT_THROW(client.find_peers(257, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::tracker
