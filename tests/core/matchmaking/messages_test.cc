#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <set>

#include "core/matchmaking/declaration.h"
#include "core/matchmaking/group_key.h"
#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/group_plan.h"
#include "core/matchmaking/messages.h"
#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::matchmaking {
namespace {

std::vector<MatchmakingMessage> samples() {
  std::vector<MatchmakingMessage> out;
  MatchmakingMessage join = make_message(MessageKind::JoinRequest, 300);
  join.schema_hash = 0xABCDEF0123456789ull;
  join.group_key = "averaging.0b101";
  join.expiration = 12.5;
  join.client_mode = true;
  join.gathered = {1, 2, 3};
  out.push_back(join);
  for (std::uint8_t s = 0; s <= 7; ++s) {
    MatchmakingMessage reply = make_message(MessageKind::JoinReply, s);
    reply.status = static_cast<JoinStatus>(s);
    if (reply.status == JoinStatus::Accepted) reply.leader_expiration = 99.25;
    if (reply.status == JoinStatus::NotALeader) reply.suggested_leader = 77;
    out.push_back(reply);
  }
  MatchmakingMessage no_suggestion = make_message(MessageKind::JoinReply, 8);
  no_suggestion.status = JoinStatus::NotALeader;
  out.push_back(no_suggestion);
  MatchmakingMessage begin = make_message(MessageKind::Begin, 9);
  begin.group_id = 0x1122334455667788ull;
  begin.leader = 4;
  begin.members = {{4, false, {9}}, {1000000, true, {}}};
  out.push_back(begin);
  MatchmakingMessage disband = make_message(MessageKind::Disband, 10);
  disband.suggested_leader = 3;
  out.push_back(disband);
  out.push_back(make_message(MessageKind::Disband, 11));
  out.push_back(make_message(MessageKind::Leave, 12));
  return out;
}

TEST(MatchmakingMessages, RoundTrip) {
  for (const auto& m : samples()) {
    const auto bytes = encode(m);
    EXPECT_EQ(peek_service(bytes), ServiceId::Matchmaking);
    EXPECT_EQ(decode(bytes), m) << static_cast<int>(m.kind);
  }
}

TEST(MatchmakingMessages, MalformedInputThrowsDecodeError) {
  for (const auto& m : samples()) {
    const auto bytes = encode(m);
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(decode(std::span(bytes).first(n)), DecodeError) << static_cast<int>(m.kind) << " cut at " << n;
    auto trailing = bytes;
    trailing.push_back(0);
    EXPECT_THROW(decode(trailing), DecodeError);
  }
  auto bytes = encode(samples()[0]);
  bytes[0] = static_cast<std::uint8_t>(ServiceId::Dht);
  EXPECT_THROW(decode(bytes), DecodeError);
  bytes = encode(samples()[0]);
  bytes[1] = 6;  // unknown kind
  EXPECT_THROW(decode(bytes), DecodeError);
  MatchmakingMessage reply = make_message(MessageKind::JoinReply, 1);
  bytes = encode(reply);
  bytes[3] = 8;  // unknown status
  EXPECT_THROW(decode(bytes), DecodeError);
  MatchmakingMessage join = samples()[0];
  join.expiration = std::numeric_limits<double>::infinity();
  EXPECT_THROW(decode(encode(join)), DecodeError);
  join = samples()[0];
  join.group_key.assign(kMaxGroupKeyBytes + 1, 'x');
  EXPECT_THROW(decode(encode(join)), DecodeError);
  MatchmakingMessage begin = make_message(MessageKind::Begin, 1);
  EXPECT_THROW(decode(encode(begin)), DecodeError);  // no members
  // A hostile member count cannot allocate.
  std::vector<std::uint8_t> hostile = {static_cast<std::uint8_t>(ServiceId::Matchmaking), 3, 0};
  Writer w(hostile);
  w.u64(1);
  w.varint(0);
  w.varint(1ull << 40);
  EXPECT_THROW(decode(hostile), DecodeError);
}

TEST(GroupKeys, KeysAndShiftRegister) {
  EXPECT_EQ(group_key("run", "0110"), "run.0b0110");
  EXPECT_EQ(group_key("run", ""), "run.0b");
  EXPECT_THROW(group_key("run", "012"), std::invalid_argument);
  EXPECT_EQ(index_bits(1), 0);
  EXPECT_EQ(index_bits(2), 1);
  EXPECT_EQ(index_bits(5), 3);
  EXPECT_EQ(index_bits(8), 3);
  EXPECT_EQ(next_bits("0110", 5, 3), "0101");   // "0110" + "101", last 4
  EXPECT_EQ(next_bits("01", 6, 3), "10");
  EXPECT_EQ(next_bits("", 3, 2), "");
  const auto a = member_indices(42, 5, 8), b = member_indices(42, 5, 8);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::set<std::uint64_t>(a.begin(), a.end()).size(), 5u);
  for (auto i : a) EXPECT_LT(i, 8u);
  EXPECT_NE(member_indices(43, 5, 8), a);
}

TEST(Declarations, RoundTripAndRejectMalformed) {
  const Declaration d{12.75, false};
  EXPECT_EQ(decode_declaration(encode_declaration(d)), d);
  auto bytes = encode_declaration(d);
  bytes.back() = 2;
  EXPECT_THROW(decode_declaration(bytes), DecodeError);
  bytes.pop_back();
  EXPECT_THROW(decode_declaration(bytes), DecodeError);
  EXPECT_EQ(decode_peer_subkey(peer_subkey(123456)), 123456u);
  EXPECT_THROW(decode_peer_subkey(std::vector<std::uint8_t>{1, 2, 3}), DecodeError);
}

// Records of the right size take decode_announcement's direct path; each malformed one must still
// be refused, as the checked reader refuses it.
TEST(Announcements, RoundTripAndRejectMalformedRecordsOfTheRightSize) {
  const Announcement without{{12, 1e9, 2.5e8, true}, std::nullopt};
  const Announcement with{{12, 1e9, 2.5e8, false}, 0x0102030405060708ull};
  const auto bytes = encode_announcement(without);
  ASSERT_EQ(bytes.size(), 27u);
  EXPECT_EQ(decode_announcement(bytes), without);
  const auto stepped = encode_announcement(with);
  ASSERT_EQ(stepped.size(), 35u);
  EXPECT_EQ(decode_announcement(stepped), with);
  EXPECT_EQ(decode_announcement(encode_announcement({{1, 2, 3, false}, 0})).state_step, 0u);
  const auto with_rate = [&](const std::vector<std::uint8_t>& record, int field, double v) {
    auto b = record;
    std::memcpy(b.data() + 1 + 8 * field, &v, 8);
    return b;
  };
  for (const auto& record : {bytes, stepped}) {
    for (int field = 0; field < 3; ++field) {
      SCOPED_TRACE(field);
      EXPECT_THROW(decode_announcement(with_rate(record, field, -1.0)), DecodeError);
      EXPECT_THROW(decode_announcement(with_rate(record, field, std::numeric_limits<double>::quiet_NaN())), DecodeError);
      EXPECT_THROW(decode_announcement(with_rate(record, field, std::numeric_limits<double>::infinity())), DecodeError);
      EXPECT_EQ(decode_announcement(with_rate(record, field, 0.0)).state_step, decode_announcement(record).state_step);
    }
    auto b = record;
    b[25] = 2;  // client flag
    EXPECT_THROW(decode_announcement(b), DecodeError);
    b = record;
    b[26] = 2;  // state flag
    EXPECT_THROW(decode_announcement(b), DecodeError);
    b = record;
    b.front() = 1;  // version
    EXPECT_THROW(decode_announcement(b), DecodeError);
    b = record;
    b.push_back(0);  // trailing byte
    EXPECT_THROW(decode_announcement(b), DecodeError);
    b = record;
    b.pop_back();  // truncated
    EXPECT_THROW(decode_announcement(b), DecodeError);
  }
  auto b = bytes;
  b[26] = 1;  // a state step announced but missing
  EXPECT_THROW(decode_announcement(b), DecodeError);
  b = stepped;
  b[26] = 0;  // a state step that is not announced
  EXPECT_THROW(decode_announcement(b), DecodeError);
}

TEST(GroupPlan, CapacitiesAndPlanFollowTheGroupOrder) {
  const planner::PeerCapacity c{100, 1e8, 5e7, false};
  EXPECT_EQ(decode_announcement(encode_announcement({c})).capacity.upload_bps, 5e7);
  Group g{77, 9, {{9, false, encode_announcement({c})}, {4, true, encode_announcement({c, 3})}, {6, false, {1, 2}}}};
  const auto input = group_capacities(g);
  ASSERT_EQ(input.peers.size(), 3u);
  EXPECT_TRUE(input.peers[1].client_mode);
  EXPECT_EQ(input.peers[2].compute_sps, 0);  // undecodable: neither sends nor reduces
  const auto plan = plan_for_group(g, averaging::assign_roles(averaging::Strategy::AllReduce, input), 1000,
                                   codec::Codec::Fp32);
  EXPECT_EQ(plan.round_id, 77u);
  EXPECT_EQ(plan.members, (std::vector<PeerId>{9, 4}));
  EXPECT_EQ(plan.span_length(0), 1000u);  // the client member reduces nothing
  EXPECT_EQ(plan.span_length(1), 0u);
}

}  // namespace
}  // namespace swarmlab::core::matchmaking
