#include "core/relay/relayed_environment.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/relay/relay_frame.h"
#include "support/memory_world.h"
#include "support/moving_clock_environment.h"
#include "support/recording_service.h"

namespace swarmlab::core::relay {
namespace {

using testing::MemoryWorld;
using testing::RecordingService;

Message bytes_message(std::vector<std::uint8_t> b, std::uint64_t virtual_bytes = 0) { return Message{std::move(b), virtual_bytes}; }

// Peer 0 public and the relay, 1 public, 2 and 3 behind NAT (cone and symmetric), 4 behind a cone NAT.
// With `clock_step`, each peer's clock moves by that much at every read, as live mode's does.
struct RelayWorld {
  explicit RelayWorld(bool relays = true, bool punching = false, Seconds clock_step = 0) {
    ReachabilityConfig c;
    c.nat = {Nat::None, Nat::None, Nat::Cone, Nat::Symmetric, Nat::Cone};
    if (relays) c.relays = {{0, 1e9, 1e9}};
    c.hole_punching = punching;
    reach = std::make_unique<Reachability>(c);
    // The network itself refuses what NAT forbids: two NAT'd peers never reach each other
    // directly unless the table says their hole punch worked.
    for (PeerId a = 0; a < world.size(); ++a)
      for (PeerId b = 0; b < world.size(); ++b)
        if (a != b && !reach->direct(a, b)) world.set_blocked_one_way(a, b, true);
    for (PeerId p = 0; p < world.size(); ++p) {
      if (clock_step > 0) clocks.push_back(std::make_unique<testing::MovingClockEnvironment>(world.env(p), clock_step));
      envs.push_back(std::make_unique<RelayedEnvironment>(clocks.empty() ? world.env(p) : *clocks.back(), *reach));
      sinks.push_back(std::make_unique<RecordingService>());
      envs.back()->set_sink(sinks.back().get());
    }
  }
  MemoryWorld world{5};
  std::vector<std::unique_ptr<testing::MovingClockEnvironment>> clocks;
  std::unique_ptr<Reachability> reach;
  std::vector<std::unique_ptr<RelayedEnvironment>> envs;
  std::vector<std::unique_ptr<RecordingService>> sinks;
};

TEST(Reachability, PublicPairsAndPublicToNatAreDirectNatPairsNeedARelayOrAPunch) {
  RelayWorld w;
  EXPECT_TRUE(w.reach->direct(0, 1));
  EXPECT_TRUE(w.reach->direct(2, 0));
  EXPECT_TRUE(w.reach->direct(1, 3));
  EXPECT_FALSE(w.reach->direct(2, 3));
  EXPECT_FALSE(w.reach->direct(2, 4));  // cone-cone, but punching is off
  EXPECT_EQ(w.reach->relay_for(2, 3), std::optional<PeerId>(0));
  EXPECT_EQ(w.reach->relay_for(3, 2), std::optional<PeerId>(0));
  EXPECT_EQ(w.reach->relay_for(0, 2), std::nullopt);

  Reachability punched({{Nat::None, Nat::None, Nat::Cone, Nat::Symmetric, Nat::Cone}, {}, true});
  EXPECT_TRUE(punched.direct(2, 4));
  EXPECT_FALSE(punched.direct(2, 3));  // a symmetric NAT defeats the punch
  EXPECT_FALSE(punched.direct(3, 3 + 1));
  EXPECT_EQ(punched.relay_for(2, 3), std::nullopt);  // and there is no relay
}

TEST(Reachability, RejectsARelayBehindNatOrOutsideTheCollaboration) {
  EXPECT_THROW(Reachability({{Nat::None, Nat::Cone}, {{1, 1, 1}}, false}), std::invalid_argument);
  EXPECT_THROW(Reachability({{Nat::None, Nat::Cone}, {{2, 1, 1}}, false}), std::invalid_argument);
  EXPECT_THROW(Reachability({{Nat::None, Nat::Cone}, {{0, 1, 1}, {0, 1, 1}}, false}), std::invalid_argument);
}

TEST(Reachability, PairsSpreadOverTheRelaysTheSameWayBothWays) {
  ReachabilityConfig c;
  c.nat.assign(3, Nat::None);
  c.nat.resize(40, Nat::Symmetric);
  c.relays = {{0, 1, 1}, {1, 1, 1}, {2, 1, 1}};
  const Reachability r(c);
  std::vector<int> used(3, 0);
  for (PeerId a = 3; a < 40; ++a)
    for (PeerId b = a + 1; b < 40; ++b) {
      const auto relay = r.relay_for(a, b);
      ASSERT_TRUE(relay);
      EXPECT_EQ(relay, r.relay_for(b, a));
      ++used[*relay];
    }
  for (int u : used) EXPECT_GT(u, 150);  // 666 pairs, about 222 each
}

TEST(Reachability, RoutesForAGroupNameTheRelayAndItsLinks) {
  ReachabilityConfig c;
  c.nat = {Nat::None, Nat::None, Nat::Symmetric, Nat::Symmetric};
  c.relays = {{1, 5e6, 7e6}};
  const Reachability r(c);
  planner::PlannerInput in;
  in.peers.assign(3, planner::PeerCapacity{1, 1e6, 2e6, false});
  // Members 0, 2, 3: the relay (peer 1) is not a member, so it comes with its offered links.
  const std::vector<PeerId> members{0, 2, 3};
  r.add_routes(in, members);
  ASSERT_EQ(in.relays.size(), 1u);
  EXPECT_EQ(in.relays[0].member, std::nullopt);
  EXPECT_EQ(in.relays[0].download_bps, 5e6);
  EXPECT_EQ(in.routes[0][1], planner::kDirect);
  EXPECT_EQ(in.routes[1][2], 0);
  EXPECT_EQ(in.routes[2][1], 0);
  // With the relay in the group, it relays over the links it announced.
  const std::vector<PeerId> with_relay{1, 2, 3};
  r.add_routes(in, with_relay);
  ASSERT_EQ(in.relays.size(), 1u);
  EXPECT_EQ(in.relays[0].member, std::optional<std::size_t>(0));
  EXPECT_EQ(in.relays[0].upload_bps, 2e6);
  // Without relays the NAT'd pair is unreachable.
  const Reachability none({c.nat, {}, false});
  none.add_routes(in, members);
  EXPECT_EQ(in.routes[1][2], planner::kUnreachable);
  EXPECT_TRUE(in.relays.empty());
}

TEST(RelayedEnvironment, NatPeersExchangeMessagesThroughTheRelayInOrder) {
  RelayWorld w;
  for (std::uint8_t i = 0; i < 5; ++i) w.envs[2]->send(3, bytes_message({7, i}, 100));
  w.envs[3]->send(2, bytes_message({9}));
  w.envs[2]->send(0, bytes_message({1}));  // direct to a public peer
  w.world.run();
  ASSERT_EQ(w.sinks[3]->got.size(), 5u);
  for (std::uint8_t i = 0; i < 5; ++i) {
    EXPECT_EQ(w.sinks[3]->got[i].first, 2u);
    EXPECT_EQ(w.sinks[3]->got[i].second, (std::vector<std::uint8_t>{7, i}));
  }
  ASSERT_EQ(w.sinks[2]->got.size(), 1u);
  EXPECT_EQ(w.sinks[2]->got[0].first, 3u);
  ASSERT_EQ(w.sinks[0]->got.size(), 1u);  // the relay's own services saw only the direct one
  EXPECT_EQ(w.envs[0]->stats().forwarded, 6u);
  EXPECT_EQ(w.envs[2]->stats().sent_relayed, 5u);
  EXPECT_EQ(w.envs[3]->stats().received_relayed, 5u);
  // The virtual payload crossed both hops: the relay received and sent it.
  EXPECT_GE(w.world.bytes_received(0), 5u * 100);
  EXPECT_GE(w.world.bytes_sent(0), 5u * 100);
  EXPECT_TRUE(w.sinks[2]->failures.empty());
}

TEST(RelayedEnvironment, WithoutARelayANatPairIsRefused) {
  RelayWorld w(/*relays=*/false);
  w.envs[2]->send(3, bytes_message({1}));
  w.envs[2]->send(3, bytes_message({2}));
  w.world.run();
  EXPECT_TRUE(w.sinks[3]->got.empty());
  EXPECT_EQ(w.sinks[2]->failures, std::vector<PeerId>{3});  // once for both sends
  EXPECT_EQ(w.envs[2]->stats().refused, 2u);
}

TEST(RelayedEnvironment, HolePunchedPairsTalkDirectly) {
  RelayWorld w(true, /*punching=*/true);
  w.envs[2]->send(4, bytes_message({5}));
  w.world.run();
  ASSERT_EQ(w.sinks[4]->got.size(), 1u);
  EXPECT_EQ(w.envs[0]->stats().forwarded, 0u);
}

TEST(RelayedEnvironment, AnEndCrashingIsReportedToTheOtherEndThroughTheRelay) {
  RelayWorld w;
  w.envs[2]->send(3, bytes_message({1}));
  w.world.run();
  ASSERT_EQ(w.sinks[3]->got.size(), 1u);
  w.world.set_down(3);
  w.world.run();
  EXPECT_EQ(w.sinks[2]->failures, std::vector<PeerId>{3});
}

TEST(RelayedEnvironment, TheRelayCrashingFailsEveryPeerReachedThroughIt) {
  RelayWorld w;
  w.envs[2]->send(3, bytes_message({1}));
  w.envs[2]->send(0, bytes_message({1}));
  w.world.run();
  w.world.set_down(0);
  w.world.run();
  auto f = w.sinks[2]->failures;
  std::sort(f.begin(), f.end());
  EXPECT_EQ(f, (std::vector<PeerId>{0, 3}));
}

TEST(RelayedEnvironment, ForgedAndMalformedFramesAreDropped) {
  RelayWorld w;
  // Peer 1 is public but not the relay: it neither forwards nor may deliver for the pair.
  w.world.env(2).send(1, bytes_message(encode_frame(FrameKind::Forward, 3, std::vector<std::uint8_t>{1})));
  w.world.env(1).send(3, bytes_message(encode_frame(FrameKind::Deliver, 2, std::vector<std::uint8_t>{1})));
  w.world.env(1).send(3, bytes_message(encode_frame(FrameKind::Unreachable, 2)));
  // Malformed: truncated, unknown kind, a peer out of range, a frame naming its own sender.
  w.world.env(2).send(0, bytes_message({kRelayTag}));
  w.world.env(2).send(0, bytes_message({kRelayTag, 9, 3}));
  w.world.env(2).send(0, bytes_message(encode_frame(FrameKind::Forward, 77, std::vector<std::uint8_t>{1})));
  w.world.env(2).send(0, bytes_message(encode_frame(FrameKind::Forward, 2, std::vector<std::uint8_t>{1})));
  w.world.run();
  EXPECT_EQ(w.envs[1]->stats().dropped_frames, 1u);
  EXPECT_EQ(w.envs[3]->stats().dropped_frames, 2u);
  EXPECT_EQ(w.envs[0]->stats().dropped_frames, 4u);
  EXPECT_EQ(w.envs[0]->stats().forwarded, 0u);
  for (const auto& s : w.sinks) {
    EXPECT_TRUE(s->got.empty());
    EXPECT_TRUE(s->failures.empty());
  }
}

TEST(RelayedEnvironment, PacingStaysPerPairWhenCircuitsShareTheConnectionToTheRelay) {
  // Peer 2 streams to 3 through the relay at a paced 8 Mb/s, and sends 4 (another circuit on
  // the same connection to the relay) one unpaced message: it must not wait behind the stream.
  RelayWorld w;
  w.envs[2]->set_pacing(3, 8e6);
  for (std::uint8_t k = 0; k < 20; ++k) w.envs[2]->send(3, bytes_message({k}, 64 << 10));
  w.envs[2]->send(4, bytes_message({99}));
  w.world.run_for(0.2);
  ASSERT_EQ(w.sinks[4]->got.size(), 1u);
  EXPECT_LT(w.sinks[3]->got.size(), 10u);  // 1.3 MB at 8 Mb/s takes 1.3 s
  w.world.run();
  ASSERT_EQ(w.sinks[3]->got.size(), 20u);
  // The stream kept its rate: 19 messages after the first over about 1.25 s.
  EXPECT_GT(w.world.now(), 1.2);
  for (std::uint8_t k = 0; k < 20; ++k) EXPECT_EQ(w.sinks[3]->got[k].second, std::vector<std::uint8_t>{k});
}

// Live mode's clock moves while a handler runs. A paced stream whose messages take about as long
// to send as the clock moves between two reads keeps its order and never asks for a negative delay:
// the next release is a deadline, never `next_free - now()` against a later read (before, some
// of these rates threw).
TEST(RelayedEnvironment, APacedStreamKeepsGoingOnAClockThatMovesWithinAHandler) {
  constexpr Seconds kStep = 1e-3;
  for (double reads = 0.5; reads <= 4.0; reads += 0.125) {
    SCOPED_TRACE("a message takes about " + std::to_string(reads) + " clock reads to send");
    RelayWorld w(true, false, kStep);
    w.envs[2]->set_pacing(3, 8.0 * 1000 / (reads * kStep));
    for (std::uint8_t k = 0; k < 6; ++k) ASSERT_NO_THROW(w.envs[2]->send(3, bytes_message({k}, 1000)));
    ASSERT_NO_THROW(w.world.run());
    ASSERT_EQ(w.sinks[3]->got.size(), 6u);
    for (std::uint8_t k = 0; k < 6; ++k) EXPECT_EQ(w.sinks[3]->got[k].second, std::vector<std::uint8_t>{k});
  }
}

TEST(RelayFrame, RoundTripsAndRejectsMalformedBytes) {
  const std::vector<std::uint8_t> payload{1, 2, 3};
  const auto bytes = encode_frame(FrameKind::Deliver, 300, payload);
  const RelayFrame f = decode_frame(bytes);
  EXPECT_EQ(f.kind, FrameKind::Deliver);
  EXPECT_EQ(f.peer, 300u);
  EXPECT_EQ(std::vector<std::uint8_t>(f.payload.begin(), f.payload.end()), payload);
  EXPECT_THROW(decode_frame(std::vector<std::uint8_t>{}), DecodeError);
  EXPECT_THROW(decode_frame(std::vector<std::uint8_t>{kRelayTag, 0, 1}), DecodeError);
  EXPECT_THROW(decode_frame(std::vector<std::uint8_t>{kRelayTag, 3, 1, 5}), DecodeError);
  EXPECT_THROW(decode_frame(std::vector<std::uint8_t>{kRelayTag, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}), DecodeError);
}

}  // namespace
}  // namespace swarmlab::core::relay
