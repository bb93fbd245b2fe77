// The ns-3 backend on its own and beside the fluid model: line rate, intact in-order delivery,
// failures, pacing, pair caps, capacity changes, determinism, and co-simulation with the engine.
// Sizes in bytes; rates in bits/s of goodput (as LinkSpec).
#include "sim/network/ns3/ns3_network.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/network/flow_network.h"

namespace swarmlab::sim {
namespace {

constexpr double kMbps = 1e6;

struct Recorder {
  std::vector<TransferOutcome> outcomes;
  std::vector<int> tags;
  Network::Done done(int tag = 0) {
    return [this, tag](const TransferOutcome& o) {
      outcomes.push_back(o);
      tags.push_back(tag);
    };
  }
};

LinkSpec link(double down_mbps, double up_mbps, double latency_s = 0.005) {
  return LinkSpec{down_mbps * kMbps, up_mbps * kMbps, latency_s};
}

std::unique_ptr<Network> make(bool ns3, Engine& e, std::vector<LinkSpec> links, Ns3Options options = {}) {
  if (ns3) return std::make_unique<Ns3Network>(e, std::move(links), std::move(options));
  return std::make_unique<FlowNetwork>(e, std::move(links));
}

TEST(Ns3Network, LongFlowReachesLineRate) {
  for (const std::uint32_t mtu : {65000u, 1500u}) {
    Engine e;
    Ns3Options o;
    o.mtu_bytes = mtu;
    Ns3Network net(e, {link(100, 100, 0.01), link(100, 100, 0.01)}, o);
    Recorder r;
    const std::uint64_t bytes = mtu == 1500 ? 60'000'000 : 100'000'000;  // 4.8 s / 8 s at 100 Mb/s
    net.transmit(0, 1, bytes, r.done());
    e.run();
    ASSERT_EQ(r.outcomes.size(), 1u) << "MTU " << mtu;
    ASSERT_TRUE(r.outcomes[0].delivered);
    const double rate = 8.0 * static_cast<double>(bytes) / r.outcomes[0].finished;
    EXPECT_GE(rate, 0.9 * 100 * kMbps) << "MTU " << mtu << ": finished at " << r.outcomes[0].finished;
    EXPECT_LE(rate, 1.0 * 100 * kMbps) << "MTU " << mtu;
    EXPECT_EQ(net.bytes_delivered(), bytes);
    EXPECT_EQ(net.packets_dropped(), 0u);
  }
}

TEST(Ns3Network, MessagesArriveWholeAndInOrderPerPair) {
  for (const std::uint32_t mtu : {65000u, 1500u}) {
    Engine e;
    Ns3Options o;
    o.mtu_bytes = mtu;
    Ns3Network net(e, {link(50, 50), link(50, 50), link(50, 50)}, o);
    Recorder ab, cb;
    std::uint64_t total = 0;
    // Sizes around segment and buffer boundaries, including a 1-byte and a multi-megabyte message.
    const std::vector<std::uint64_t> sizes = {1, 1447, 1448, 1449, 64948, 64949, 3'000'000, 4, 524'288, 17};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      net.transmit(0, 1, sizes[i], ab.done(static_cast<int>(i)));
      net.transmit(2, 1, sizes[sizes.size() - 1 - i], cb.done(static_cast<int>(i)));
      total += 2 * sizes[i];
    }
    e.run();
    ASSERT_EQ(ab.outcomes.size(), sizes.size());
    ASSERT_EQ(cb.outcomes.size(), sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(ab.tags[i], static_cast<int>(i)) << "MTU " << mtu;
      EXPECT_EQ(cb.tags[i], static_cast<int>(i)) << "MTU " << mtu;
      EXPECT_TRUE(ab.outcomes[i].delivered);
      EXPECT_TRUE(cb.outcomes[i].delivered);
      if (i > 0) EXPECT_GE(ab.outcomes[i].finished, ab.outcomes[i - 1].finished);
      EXPECT_LE(ab.outcomes[i].started, ab.outcomes[i].finished);
    }
    EXPECT_EQ(net.bytes_delivered(), total) << "MTU " << mtu;
    EXPECT_EQ(net.connections_opened(), 2u);
  }
}

TEST(Ns3Network, DeliveryTakesAtLeastTheHandshakeAndOneWayLatency) {
  Engine e;
  Ns3Network net(e, {link(100, 100, 0.02), link(100, 100, 0.03)});
  Recorder r;
  net.transmit(0, 1, 100, r.done());
  e.run();
  // SYN, SYN-ACK, then the data: 1.5 round trips of 2 x 50 ms, plus serialisation.
  EXPECT_NEAR(r.outcomes.at(0).finished, 0.15, 0.002);
  // The connection stays open: the next message costs one way only.
  net.transmit(0, 1, 100, r.done());
  const Seconds sent = e.now();
  e.run();
  EXPECT_NEAR(r.outcomes.at(1).finished - sent, 0.05, 0.002);
}

// The same failure signal as the fluid model: every transfer from or to a peer that goes down fails
// one path latency after it went down, queued ones included; new transfers to it fail likewise;
// transfers elsewhere go on; once it is up again, transfers to it succeed.
TEST(Ns3Network, PeerGoingDownFailsLikeTheFlowBackend) {
  struct Run {
    Recorder to_dead, from_dead, to_live, late, after_up;
  };
  auto scenario = [](bool ns3) {
    Run run;
    Engine e;
    auto net = make(ns3, e, {link(100, 10, 0.01), link(100, 100, 0.02), link(100, 100, 0.01)});
    net->transmit(0, 1, 10'000'000, run.to_dead.done(0));
    net->transmit(0, 1, 10'000'000, run.to_dead.done(1));  // queued behind the first
    net->transmit(1, 2, 20'000'000, run.from_dead.done());  // 1.6 s at 100 Mb/s
    net->transmit(0, 2, 3'000'000, run.to_live.done());
    e.at(1.0, [&] { net->set_peer_up(1, false); });
    e.at(1.5, [&] { net->transmit(0, 1, 1000, run.late.done()); });
    e.at(2.0, [&] { net->set_peer_up(1, true); });
    e.at(2.5, [&] { net->transmit(0, 1, 1000, run.after_up.done()); });
    e.run();
    return run;
  };
  const Run flow = scenario(false), ns3 = scenario(true);
  for (const Run* r : {&flow, &ns3}) {
    const char* which = r == &flow ? "flow" : "ns3";
    ASSERT_EQ(r->to_dead.outcomes.size(), 2u) << which;
    for (const auto& o : r->to_dead.outcomes) {
      EXPECT_FALSE(o.delivered) << which;
      EXPECT_DOUBLE_EQ(o.finished, 1.0 + 0.03) << which;  // noticed one path latency later
    }
    ASSERT_EQ(r->from_dead.outcomes.size(), 1u) << which;
    EXPECT_FALSE(r->from_dead.outcomes[0].delivered) << which;
    EXPECT_DOUBLE_EQ(r->from_dead.outcomes[0].finished, 1.0 + 0.03) << which;
    ASSERT_EQ(r->to_live.outcomes.size(), 1u) << which;
    EXPECT_TRUE(r->to_live.outcomes[0].delivered) << which;
    ASSERT_EQ(r->late.outcomes.size(), 1u) << which;
    EXPECT_FALSE(r->late.outcomes[0].delivered) << which;
    EXPECT_DOUBLE_EQ(r->late.outcomes[0].finished, 1.5 + 0.03) << which;
    ASSERT_EQ(r->after_up.outcomes.size(), 1u) << which;
    EXPECT_TRUE(r->after_up.outcomes[0].delivered) << which;
  }
}

TEST(Ns3Network, PacingAndPairCapsLimitOneConnection) {
  Engine e;
  Ns3Network net(e, {link(100, 100), link(100, 100), link(100, 100)});
  Recorder paced, capped, free;
  net.set_pacing(0, 1, 20 * kMbps);
  net.set_pair_cap(2, 1, 10 * kMbps);
  net.transmit(0, 1, 5'000'000, paced.done());   // 2 s at 20 Mb/s
  net.transmit(2, 1, 2'500'000, capped.done());  // 2 s at 10 Mb/s
  e.run();
  EXPECT_NEAR(paced.outcomes.at(0).finished, 2.0, 0.1);
  EXPECT_NEAR(capped.outcomes.at(0).finished, 2.0, 0.1);
  // Lifting the pacing (kUnlimited, as the seam's 0) gives the link back.
  net.set_pacing(0, 1, kUnlimited);
  const Seconds t0 = e.now();
  net.transmit(0, 1, 12'500'000, free.done());  // 1 s at 100 Mb/s
  e.run();
  EXPECT_LT(free.outcomes.at(0).finished - t0, 1.15);
}

TEST(Ns3Network, SharesAnUplinkFairlyAndFollowsCapacityChanges) {
  auto scenario = [](bool ns3) {
    Engine e;
    auto net = make(ns3, e, {link(100, 40, 0.005), link(100, 100, 0.005), link(100, 100, 0.005)});
    Recorder a, b;
    net->transmit(0, 1, 10'000'000, a.done());
    net->transmit(0, 2, 10'000'000, b.done());
    e.at(2.0, [&] { net->set_capacity(0, 100 * kMbps, 20 * kMbps); });  // the uplink halves mid-transfer
    e.run();
    return std::pair{a.outcomes.at(0).finished, b.outcomes.at(0).finished};
  };
  const auto [fa, fb] = scenario(false);
  const auto [na, nb] = scenario(true);
  // Flow: 2 s at 20 Mb/s each (5 MB each), then 5 MB each at 10 Mb/s: 6 s.
  EXPECT_NEAR(fa, 6.01, 0.01);
  EXPECT_NEAR(na / fa, 1.0, 0.05);
  EXPECT_NEAR(nb / fb, 1.0, 0.05);
  EXPECT_NEAR(na / nb, 1.0, 0.02);  // fair queueing: neither flow starves the other
}

TEST(Ns3Network, SameInputsGiveTheSameRunEvenAfterAnotherRun) {
  auto scenario = [] {
    Engine e;
    std::vector<LinkSpec> links;
    for (int i = 0; i < 6; ++i) links.push_back(link(50 + 10 * i, 30 + 5 * i, 0.002 * (i + 1)));
    Ns3Network net(e, links);
    std::vector<double> finished;
    for (PeerId i = 0; i < 6; ++i)
      for (PeerId j = 0; j < 6; ++j)
        if (i != j)
          net.transmit(i, j, 300'000 + 1000 * (i * 6 + j), [&](const TransferOutcome& o) { finished.push_back(o.finished); });
    e.at(0.05, [&] { net.set_peer_up(3, false); });
    e.run();
    finished.push_back(static_cast<double>(net.ns3_events()));
    return finished;
  };
  const auto first = scenario();
  const auto second = scenario();
  EXPECT_EQ(first, second);
}

TEST(Ns3Network, OnlyOneAtATimeButSequentialRunsWork) {
  Engine e;
  auto net = std::make_unique<Ns3Network>(e, std::vector<LinkSpec>{link(10, 10), link(10, 10)});
  Engine other;
  EXPECT_THROW(Ns3Network(other, {link(10, 10)}), std::logic_error);
  net.reset();
  EXPECT_NO_THROW(Ns3Network(other, {link(10, 10)}));
}

TEST(Ns3Network, EngineTimersInterleaveWithPacketEvents) {
  Engine e;
  Ns3Network net(e, {link(80, 80, 0.01), link(80, 80, 0.01)});
  std::vector<double> times;
  Recorder r;
  net.transmit(0, 1, 1'000'000, r.done(0));  // 100 ms of serialisation after the handshake
  // Timers before, during and after the transfer see a monotone clock and may send.
  for (double t : {0.01, 0.07, 0.12, 0.5}) e.at(t, [&, t] {
    times.push_back(e.now());
    EXPECT_DOUBLE_EQ(e.now(), t);
    net.transmit(1, 0, 1000, r.done(1));
  });
  e.run();
  ASSERT_EQ(times.size(), 4u);
  ASSERT_EQ(r.outcomes.size(), 5u);
  for (std::size_t i = 1; i < r.outcomes.size(); ++i) EXPECT_GE(r.outcomes[i].finished, r.outcomes[i - 1].finished);
  EXPECT_GT(r.outcomes.back().finished, 0.5);
  // run_until leaves both clocks at the horizon; a send after it starts from there.
  e.run_until(2.0);
  net.transmit(0, 1, 1000, r.done(2));
  e.run();
  EXPECT_NEAR(r.outcomes.back().finished, 2.02, 0.001);
}

TEST(Ns3Network, RejectsUnknownPeersAndBadOptions) {
  Engine e;
  {
    Ns3Network net(e, {link(10, 10)});
    EXPECT_THROW(net.transmit(0, 5, 1, [](const TransferOutcome&) {}), std::out_of_range);
    EXPECT_THROW(net.set_capacity(0, -1, 1), std::invalid_argument);
  }
  Ns3Options o;
  o.queue_disc = "red";
  EXPECT_THROW(Ns3Network(e, {link(10, 10)}, o), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
