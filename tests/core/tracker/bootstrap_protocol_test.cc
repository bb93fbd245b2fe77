// The bootstrap server over the network (core/tracker/bootstrap_messages.h, bootstrap_server.h,
// bootstrap_client.h): its encoding, and every request answered through a lossy, duplicating,
// reordering network.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/service_ids.h"
#include "core/tracker/bootstrap_client.h"
#include "core/tracker/bootstrap_messages.h"
#include "core/tracker/bootstrap_server.h"
#include "core/tracker/group.h"
#include "support/memory_world.h"

namespace swarmlab::core::tracker {
namespace {

std::vector<BootstrapMessage> samples() {
  Rng rng(5);
  std::vector<BootstrapMessage> out;
  auto add = [&](BootstrapKind kind) -> BootstrapMessage& {
    out.push_back({});
    out.back().kind = kind;
    out.back().request_id = 300;
    return out.back();
  };
  add(BootstrapKind::AssignId);
  add(BootstrapKind::IdAssigned).id = dht::NodeId::random(rng, dht::kHydraIdBits);
  add(BootstrapKind::RegisterDataset).title = "fashion-mnist";
  BootstrapMessage& report = add(BootstrapKind::ReportLeader);
  report.title = "fashion-mnist";
  report.generation = 2;
  report.term = 9;
  report.leader = 70000;
  add(BootstrapKind::Done).accepted = true;
  add(BootstrapKind::FindTracker).title = "cifar-10";
  add(BootstrapKind::TrackerFound);  // not listed
  BootstrapMessage& found = add(BootstrapKind::TrackerFound);
  found.accepted = true;
  found.generation = 1;  // leader unknown
  BootstrapMessage& led = add(BootstrapKind::TrackerFound);
  led.accepted = true;
  led.generation = 3;
  led.leader = 4;
  add(BootstrapKind::ListDatasets);
  add(BootstrapKind::Datasets).titles = {"cifar-10", "fashion-mnist"};
  add(BootstrapKind::Datasets);  // none
  add(BootstrapKind::FindPeers).count = 20;
  add(BootstrapKind::Peers).peers = {3, 70000, 1};
  add(BootstrapKind::Peers);  // none yet
  return out;
}

TEST(BootstrapMessages, EveryKindRoundTripsAndNothingElseDecodes) {
  for (const BootstrapMessage& m : samples()) {
    const auto bytes = encode(m);
    EXPECT_EQ(peek_service(bytes), ServiceId::Bootstrap);
    EXPECT_EQ(decode_bootstrap_message(bytes), m) << int(m.kind);
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(decode_bootstrap_message(std::span(bytes.data(), n)), DecodeError) << int(m.kind) << " at " << n;
    auto longer = bytes;
    longer.push_back(0);
    EXPECT_THROW(decode_bootstrap_message(longer), DecodeError) << int(m.kind);
  }
  BootstrapMessage unsorted;
  unsorted.kind = BootstrapKind::Datasets;
  unsorted.titles = {"b", "a"};
  EXPECT_THROW(decode_bootstrap_message(encode(unsorted)), DecodeError);
  unsorted.titles = {"a", "a"};
  EXPECT_THROW(decode_bootstrap_message(encode(unsorted)), DecodeError);
  BootstrapMessage empty_title;
  empty_title.kind = BootstrapKind::FindTracker;
  EXPECT_THROW(decode_bootstrap_message(encode(empty_title)), DecodeError);
  BootstrapLimits small;
  small.max_title_bytes = 4;
  EXPECT_THROW(decode_bootstrap_message(encode(samples()[2]), small), DecodeError);
  BootstrapMessage peers;
  peers.kind = BootstrapKind::Peers;
  peers.peers = {3, 3};
  EXPECT_THROW(decode_bootstrap_message(encode(peers)), DecodeError);  // a peer twice
  peers.peers = {1, 2, 3};
  BootstrapLimits two;
  two.max_peers = 2;
  EXPECT_THROW(decode_bootstrap_message(encode(peers), two), DecodeError);
  BootstrapMessage find;
  find.kind = BootstrapKind::FindPeers;
  EXPECT_THROW(decode_bootstrap_message(encode(find)), DecodeError);  // none wanted
  find.count = 257;
  EXPECT_THROW(decode_bootstrap_message(encode(find)), DecodeError);
  auto bad_kind = encode(samples()[0]);
  bad_kind[1] = 12;
  EXPECT_THROW(decode_bootstrap_message(bad_kind), DecodeError);
  auto bad_bool = encode(samples()[4]);
  bad_bool.back() = 2;
  EXPECT_THROW(decode_bootstrap_message(bad_bool), DecodeError);
}

// A server at peer 0 and clients at 1..4, over a network that drops 20% of messages, duplicates
// some and reorders them.
struct BootstrapWorld {
  BootstrapWorld() : world(5, core::testing::PeerSpec{0.01}, 11), server(world.env(0), 3) {
    world.set_faults({0.2, 0.05, 0.001, 0.02, false});
    world.env(0).set_sink(&server);
    for (PeerId p = 1; p < 5; ++p) {
      clients.push_back(std::make_unique<BootstrapClient>(world.env(p), 0, 0.1, 20));
      world.env(p).set_sink(clients.back().get());
    }
  }
  BootstrapClient& client(PeerId p) { return *clients[p - 1]; }
  template <typename T>
  T wait(std::optional<T>& slot) {
    for (int i = 0; i < 500 && !slot; ++i) world.run_for(0.01);
    EXPECT_TRUE(slot.has_value());
    return slot.value_or(T{});
  }
  core::testing::MemoryWorld world;
  BootstrapServer server;
  std::vector<std::unique_ptr<BootstrapClient>> clients;
};

TEST(BootstrapProtocol, IdsCatalogueAndTrackerLeadersThroughALossyNetwork) {
  BootstrapWorld w;
  // Every peer gets a distinct 256-bit id, the same one when it asks again.
  std::set<dht::NodeId> ids;
  for (PeerId p = 1; p < 5; ++p) {
    std::optional<std::optional<dht::NodeId>> got;
    w.client(p).assign_id([&](std::optional<dht::NodeId> id) { got = id; });
    const std::optional<dht::NodeId> id = w.wait(got);
    ASSERT_TRUE(id) << p;
    EXPECT_TRUE(ids.insert(*id).second);
    EXPECT_EQ(w.server.directory().id_of(p), *id);
  }
  std::optional<std::optional<dht::NodeId>> again;
  w.client(2).assign_id([&](std::optional<dht::NodeId> id) { again = id; });
  EXPECT_EQ(w.wait(again), w.server.directory().id_of(2));

  // Peer 1 creates a dataset; a retransmission of its request is accepted again, another peer's
  // claim on the title is refused.
  auto ask = [&](auto call) {
    std::optional<std::optional<bool>> got;
    call([&](std::optional<bool> ok) { got = ok; });
    return w.wait(got);
  };
  EXPECT_EQ(ask([&](auto cb) { w.client(1).register_dataset("fashion-mnist", cb); }), true);
  EXPECT_EQ(ask([&](auto cb) { w.client(1).register_dataset("fashion-mnist", cb); }), true);
  EXPECT_EQ(ask([&](auto cb) { w.client(3).register_dataset("fashion-mnist", cb); }), false);
  EXPECT_EQ(ask([&](auto cb) { w.client(3).register_dataset("cifar-10", cb); }), true);
  std::optional<std::optional<std::vector<std::string>>> titles;
  w.client(4).list_datasets([&](std::optional<std::vector<std::string>> t) { titles = t; });
  EXPECT_EQ(w.wait(titles), (std::vector<std::string>{"cifar-10", "fashion-mnist"}));

  // A tracker's leader reports itself; readers find it; a rebooted group's generation supersedes
  // the old leader's reports.
  auto find = [&](const std::string& title) {
    std::optional<std::optional<std::optional<TrackerLocation>>> got;
    w.client(4).find_tracker(title, [&](std::optional<std::optional<TrackerLocation>> where) { got = where; });
    return w.wait(got);
  };
  EXPECT_FALSE(find("imagenet").value_or(std::nullopt).has_value());  // not listed
  EXPECT_EQ(ask([&](auto cb) { w.client(2).report_leader("fashion-mnist", 0, 1, cb); }), true);
  auto where = find("fashion-mnist").value_or(std::nullopt);
  ASSERT_TRUE(where);
  EXPECT_EQ(where->generation, 0u);
  EXPECT_EQ(where->leader, 2u);
  EXPECT_TRUE(w.server.directory().set_generation("fashion-mnist", 1));
  EXPECT_EQ(ask([&](auto cb) { w.client(2).report_leader("fashion-mnist", 0, 4, cb); }), false);
  EXPECT_EQ(ask([&](auto cb) { w.client(3).report_leader("fashion-mnist", 1, 1, cb); }), true);
  where = find("fashion-mnist").value_or(std::nullopt);
  ASSERT_TRUE(where);
  EXPECT_EQ(where->generation, 1u);
  EXPECT_EQ(where->leader, 3u);
  EXPECT_GT(w.client(1).requests_sent(), 0u);
}

TEST(BootstrapProtocol, AClientGivesUpOnASilentServerAndServersDropWhatIsNotARequest) {
  core::testing::MemoryWorld world(2, core::testing::PeerSpec{0.01}, 3);
  BootstrapClient client(world.env(1), 0, 0.1, 3);
  world.env(1).set_sink(&client);
  world.set_down(0, core::testing::MemoryWorld::Departure::Silent);
  bool called = false;
  std::optional<dht::NodeId> id = dht::NodeId();
  client.assign_id([&](std::optional<dht::NodeId> got) {
    called = true;
    id = got;
  });
  world.run_for(1);
  EXPECT_TRUE(called);
  EXPECT_FALSE(id);
  EXPECT_EQ(client.requests_sent(), 3u);

  core::testing::MemoryWorld world2(2, core::testing::PeerSpec{0.01}, 4);
  BootstrapServer server(world2.env(0), 1);
  BootstrapMessage reply;
  reply.kind = BootstrapKind::Done;
  server.handle(1, Message{encode(reply), 0});
  server.handle(1, Message{{static_cast<std::uint8_t>(ServiceId::Bootstrap), 1}, 0});
  EXPECT_EQ(server.dropped(), 2u);
  // A report naming another peer as leader is refused.
  ASSERT_TRUE(server.directory().register_dataset("fashion-mnist", 1));
  BootstrapMessage report;
  report.kind = BootstrapKind::ReportLeader;
  report.title = "fashion-mnist";
  report.leader = 0;
  server.handle(1, Message{encode(report), 0});
  EXPECT_FALSE(server.directory().find("fashion-mnist")->leader);
}

}  // namespace
}  // namespace swarmlab::core::tracker
