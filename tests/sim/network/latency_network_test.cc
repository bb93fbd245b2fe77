#include "sim/network/latency_network.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

namespace swarmlab::sim {
namespace {

// Peer 0: 8 Mbit/s up, 0.01 s; peer 1: 16 Mbit/s down, 0.02 s; peer 2: fast, 0.005 s.
std::vector<LinkSpec> links() {
  return {LinkSpec{80e6, 8e6, 0.01}, LinkSpec{16e6, 16e6, 0.02}, LinkSpec{1e9, 1e9, 0.005}};
}

struct Recorder {
  std::vector<std::pair<int, TransferOutcome>> done;
  Network::Done make(int tag) {
    return [this, tag](const TransferOutcome& o) { done.emplace_back(tag, o); };
  }
};

TEST(LatencyNetwork, DeliveryIsLatencyPlusSerialisationAtTheSlowerEnd) {
  Engine e;
  LatencyNetwork net(e, links());
  Recorder r;
  net.transmit(0, 1, 1000, r.make(0));  // min(8, 16) Mbit/s: 1 ms
  e.run();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_TRUE(r.done[0].second.delivered);
  EXPECT_DOUBLE_EQ(r.done[0].second.started, 0);
  EXPECT_NEAR(r.done[0].second.finished, 0.01 + 0.02 + 0.001, 1e-12);
  EXPECT_EQ(net.bytes_delivered(), 1000u);
  EXPECT_EQ(net.in_flight(), 0u);
  EXPECT_EQ(net.active_pairs(), 0u);
}

TEST(LatencyNetwork, FifoPerOrderedPairWithoutSharingAcrossPairs) {
  Engine e;
  LatencyNetwork net(e, links());
  Recorder r;
  net.transmit(0, 1, 100000, r.make(0));  // 0.1 s of serialisation
  net.transmit(0, 1, 10, r.make(1));      // queued behind it on the same pair
  net.transmit(0, 2, 10, r.make(2));      // another pair: not slowed down
  e.run();
  ASSERT_EQ(r.done.size(), 3u);
  EXPECT_EQ(r.done[0].first, 2);
  EXPECT_NEAR(r.done[0].second.finished, 0.015 + 10 * 8 / 8e6, 1e-12);
  EXPECT_EQ(r.done[1].first, 0);
  EXPECT_EQ(r.done[2].first, 1);
  EXPECT_NEAR(r.done[2].second.started, 0.1, 1e-12);
  EXPECT_NEAR(r.done[2].second.finished, 0.1 + 10 * 8 / 8e6 + 0.03, 1e-12);
}

TEST(LatencyNetwork, SameSizeMessagesArriveInOrder) {
  Engine e;
  LatencyNetwork net(e, links());
  std::vector<int> order;
  for (int i = 0; i < 50; ++i)
    net.transmit(2, 1, 1 + (i * 37) % 11, [&order, i](const TransferOutcome&) { order.push_back(i); });
  e.run();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(LatencyNetwork, GoingDownFailsTransfersInFlightAfterAPathLatency) {
  Engine e;
  LatencyNetwork net(e, links());
  Recorder r;
  net.transmit(0, 1, 1000, r.make(0));
  net.transmit(1, 2, 1000, r.make(1));
  net.transmit(2, 0, 1000, r.make(2));  // unaffected
  e.run_until(0.005);
  net.set_peer_up(1, false);
  e.run();
  ASSERT_EQ(r.done.size(), 3u);
  for (const auto& [tag, o] : r.done) {
    if (tag == 2) {
      EXPECT_TRUE(o.delivered);
      continue;
    }
    EXPECT_FALSE(o.delivered) << tag;
    const double path = tag == 0 ? 0.03 : 0.025;
    EXPECT_NEAR(o.finished, 0.005 + path, 1e-12) << tag;
  }
  EXPECT_EQ(net.in_flight(), 0u);
  // Sending to a down peer fails too; once it is back, transfers go through.
  Recorder r2;
  net.transmit(0, 1, 10, r2.make(0));
  e.run();
  ASSERT_EQ(r2.done.size(), 1u);
  EXPECT_FALSE(r2.done[0].second.delivered);
  net.set_peer_up(1, true);
  net.transmit(0, 1, 10, r2.make(1));
  e.run();
  EXPECT_TRUE(r2.done[1].second.delivered);
}

TEST(LatencyNetwork, CapsPacingAndCapacityChangesApplyToNewTransfers) {
  Engine e;
  LatencyNetwork net(e, links());
  Recorder r;
  net.set_pair_cap(0, 1, 1e6);
  net.transmit(0, 1, 1000, r.make(0));  // 8 ms at 1 Mbit/s
  e.run();
  EXPECT_NEAR(r.done[0].second.finished, 0.03 + 0.008, 1e-12);
  net.set_pair_cap(0, 1, kUnlimited);
  net.set_pacing(0, 1, 4e6);
  net.transmit(0, 1, 1000, r.make(1));  // 2 ms
  e.run();
  EXPECT_NEAR(r.done[1].second.finished - r.done[1].second.started, 0.03 + 0.002, 1e-12);
  net.set_pacing(0, 1, kUnlimited);
  net.set_capacity(0, 80e6, 80e6);  // now the receiver's 16 Mbit/s is the bottleneck
  net.transmit(0, 1, 1000, r.make(2));
  e.run();
  EXPECT_NEAR(r.done[2].second.finished - r.done[2].second.started, 0.03 + 0.0005, 1e-12);
  EXPECT_THROW(net.transmit(0, 3, 1, r.make(3)), std::out_of_range);
}

}  // namespace
}  // namespace swarmlab::sim

namespace swarmlab::sim {
namespace {

// 0.33% loss on a 100 ms round trip: a long transfer runs at TCP's rate under loss, MSS / RTT ·
// 1.22 / √p (Mathis et al. 1997), below both links.
TEST(LatencyNetwork, PacketLossCapsALongTransferAtTcpsRateUnderLoss) {
  Engine e;
  LatencyNetwork net(e, {LinkSpec{100e6, 100e6, 0.025}, LinkSpec{100e6, 100e6, 0.025}});
  net.set_packet_loss(0.0033, 1);
  Recorder r;
  net.transmit(0, 1, 1'000'000, r.make(0));
  e.run();
  const double rate = 8 * 1448 / 0.1 * 1.22 / std::sqrt(0.0033);
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_NEAR(r.done[0].second.finished, 0.05 + 8e6 / rate, 1e-9);
}

// A short message has too few packets behind a loss for fast retransmit: about 1 - (1 - p)^packets
// of them wait one retransmission timeout, max(200 ms, 2 RTT), and the draws repeat with the seed.
TEST(LatencyNetwork, PacketLossDelaysShortMessagesByARetransmissionTimeout) {
  const auto run = [](std::uint64_t seed) {
    Engine e;
    LatencyNetwork net(e, {LinkSpec{1e9, 1e9, 0.01}, LinkSpec{1e9, 1e9, 0.01}});
    net.set_packet_loss(0.05, seed);
    Recorder r;
    for (int i = 0; i < 2000; ++i) e.at(i * 1.0, [&net, &r, i] { net.transmit(0, 1, 100, r.make(i)); });
    e.run();
    std::vector<double> delays;
    for (const auto& [tag, o] : r.done) delays.push_back(o.finished - tag * 1.0);
    return delays;
  };
  const std::vector<double> delays = run(3);
  int late = 0;
  for (const double d : delays) {
    const bool on_time = std::abs(d - (0.02 + 800 / 1e9)) < 1e-9;
    const bool retransmitted = std::abs(d - (0.02 + 800 / 1e9 + 0.2)) < 1e-9;
    ASSERT_TRUE(on_time || retransmitted) << d;
    late += retransmitted;
  }
  EXPECT_NEAR(late / 2000.0, 0.05, 0.015);
  EXPECT_EQ(run(3), delays);
  EXPECT_NE(run(4), delays);
  Engine e;
  LatencyNetwork net(e, {LinkSpec{1e9, 1e9, 0.01}});
  EXPECT_THROW(net.set_packet_loss(1.0, 1), std::invalid_argument);
  EXPECT_THROW(net.set_packet_loss(-0.1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
