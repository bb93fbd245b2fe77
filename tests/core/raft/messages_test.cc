#include "core/raft/messages.h"

#include <gtest/gtest.h>

#include "core/raft/kv_state_machine.h"
#include "core/raft/storage.h"
#include "core/service_ids.h"

namespace swarmlab::core::raft {
namespace {

std::vector<RaftMessage> samples() {
  std::vector<RaftMessage> out;
  RaftMessage vote;
  vote.kind = MessageKind::VoteRequest;
  vote.group = 77;
  vote.term = 300;
  vote.last_index = 1000;
  vote.last_term = 299;
  out.push_back(vote);
  vote.pre_vote = true;
  out.push_back(vote);
  RaftMessage vr;
  vr.kind = MessageKind::VoteReply;
  vr.term = 5;
  vr.granted = true;
  vr.pre_vote = true;
  out.push_back(vr);
  RaftMessage ae;
  ae.kind = MessageKind::AppendEntries;
  ae.group = 1;
  ae.term = 9;
  ae.prev_index = 41;
  ae.prev_term = 7;
  ae.leader_commit = 40;
  out.push_back(ae);  // heartbeat
  ae.entries.push_back({8, EntryType::Command, {1, 2, 3}});
  ae.entries.push_back({9, EntryType::Noop, {}});
  ae.entries.push_back({9, EntryType::Config, encode_config(Configuration::of({4, 1, 9}))});
  out.push_back(ae);
  RaftMessage ar;
  ar.kind = MessageKind::AppendReply;
  ar.term = 9;
  ar.success = true;
  ar.index = 44;
  out.push_back(ar);
  RaftMessage is;
  is.kind = MessageKind::InstallSnapshot;
  is.term = 12;
  is.last_index = 500;
  is.last_term = 11;
  is.config = Configuration::of({0, 1, 2});
  is.data = {9, 9, 9};
  out.push_back(is);
  RaftMessage sr;
  sr.kind = MessageKind::SnapshotReply;
  sr.term = 12;
  sr.index = 500;
  out.push_back(sr);
  RaftMessage cr;
  cr.kind = MessageKind::ClientRequest;
  cr.request_id = 1ull << 40;
  cr.data = encode_kv_command({KvOp::Cas, 3, 4, "k", "new", "old"});
  out.push_back(cr);
  RaftMessage rep;
  rep.kind = MessageKind::ClientReply;
  rep.request_id = 17;
  rep.status = ClientStatus::NotLeader;
  rep.leader = 4;
  out.push_back(rep);
  rep.status = ClientStatus::Ok;
  rep.leader.reset();
  rep.data = encode_kv_result({KvStatus::Ok, "v"});
  out.push_back(rep);
  return out;
}

TEST(RaftMessages, RoundTripEveryKind) {
  for (const RaftMessage& m : samples()) {
    const auto bytes = encode(m);
    EXPECT_EQ(bytes[0], static_cast<std::uint8_t>(ServiceId::Raft));
    EXPECT_EQ(decode(bytes, WireLimits{}), m) << "kind " << static_cast<int>(m.kind);
  }
}

TEST(RaftMessages, EveryTruncationAndTrailingByteIsRejected) {
  for (const RaftMessage& m : samples()) {
    const auto bytes = encode(m);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_THROW(decode(cut, WireLimits{}), DecodeError) << "kind " << static_cast<int>(m.kind) << " cut at " << n;
    }
    auto longer = bytes;
    longer.push_back(0);
    EXPECT_THROW(decode(longer, WireLimits{}), DecodeError);
  }
}

TEST(RaftMessages, RejectsWhatNoCorrectPeerSends) {
  auto bad = [](RaftMessage m) {
    EXPECT_THROW(decode(encode(m), WireLimits{}), DecodeError) << "kind " << static_cast<int>(m.kind);
  };
  RaftMessage ae;
  ae.kind = MessageKind::AppendEntries;
  ae.term = 5;
  ae.prev_term = 3;
  ae.entries = {{4, EntryType::Command, {}}, {3, EntryType::Command, {}}};  // terms decrease
  bad(ae);
  ae.entries = {{2, EntryType::Command, {}}};  // before prev_term
  bad(ae);
  ae.entries = {{6, EntryType::Command, {}}};  // after the leader's term
  bad(ae);
  ae.entries = {{5, EntryType::Config, {0}}};  // empty configuration
  bad(ae);
  ae.entries = {{5, EntryType::Config, {2, 7, 3}}};  // members not ascending
  bad(ae);
  ae.entries = {{5, EntryType::Noop, {1}}};  // a no-op with data
  bad(ae);
  ae.entries = {};
  ae.term = kMaxTermOrIndex + 1;  // a term that could overflow
  bad(ae);
  RaftMessage vote;
  vote.kind = MessageKind::VoteRequest;
  vote.term = 3;
  vote.last_term = 4;  // a log newer than the candidate's term
  bad(vote);
  RaftMessage is;
  is.kind = MessageKind::InstallSnapshot;
  is.term = 2;  // no members
  bad(is);

  // Raw edits: unknown kind, wrong service, unknown flags, booleans other than 0/1, entry types.
  RaftMessage vr;
  vr.kind = MessageKind::VoteReply;
  vr.term = 1;
  auto bytes = encode(vr);
  auto edit = [&](std::size_t at, std::uint8_t v) {
    auto b = bytes;
    b.at(at) = v;
    EXPECT_THROW(decode(b, WireLimits{}), DecodeError) << "byte " << at << " = " << int(v);
  };
  edit(0, static_cast<std::uint8_t>(ServiceId::Dht));
  edit(1, 0);
  edit(1, 9);
  edit(3, 2);              // flags
  edit(bytes.size() - 1, 2);  // granted
  RaftMessage one;
  one.kind = MessageKind::AppendEntries;
  one.term = 1;
  one.entries = {{1, EntryType::Command, {}}};
  bytes = encode(one);
  edit(bytes.size() - 2, 4);  // entry type
  RaftMessage reply;
  reply.kind = MessageKind::ClientReply;
  bytes = encode(reply);
  edit(4, 3);  // status
}

TEST(RaftMessages, LimitsBoundCountsAndSizes) {
  RaftMessage ae;
  ae.kind = MessageKind::AppendEntries;
  ae.term = 1;
  for (int i = 0; i < 10; ++i) ae.entries.push_back({1, EntryType::Command, Bytes(100, 7)});
  WireLimits small;
  small.max_entries = 9;
  EXPECT_THROW(decode(encode(ae), small), DecodeError);
  small = WireLimits{};
  small.max_entry_bytes = 99;
  EXPECT_THROW(decode(encode(ae), small), DecodeError);
  small = WireLimits{};
  small.max_message_bytes = 500;
  EXPECT_THROW(decode(encode(ae), small), DecodeError);
  EXPECT_NO_THROW(decode(encode(ae), WireLimits{}));

  // A hostile entry count cannot make the decoder allocate beyond the input.
  std::vector<std::uint8_t> huge = {static_cast<std::uint8_t>(ServiceId::Raft), 3, 0, 1, 0, 0, 0,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
  EXPECT_THROW(decode(huge, WireLimits{}), DecodeError);
}

TEST(RaftMessages, ConfigCodec) {
  const Configuration c = Configuration::of({5, 3, 3, 9});
  EXPECT_EQ(c.members, (std::vector<PeerId>{3, 5, 9}));
  EXPECT_EQ(decode_config(encode_config(c), 16), c);
  EXPECT_THROW(decode_config(encode_config(c), 2), DecodeError);
  EXPECT_EQ(c.quorum(), 2u);
  EXPECT_EQ(c.with(4).quorum(), 3u);
  EXPECT_EQ(c.without(5).members, (std::vector<PeerId>{3, 9}));
}

TEST(RaftStorage, MemoryStorageLogAndSnapshots) {
  MemoryStorage s(Configuration::of({0, 1, 2}));
  EXPECT_EQ(s.last_index(), 0u);
  EXPECT_EQ(s.first_index(), 1u);
  for (Term t = 1; t <= 5; ++t) s.append({t, EntryType::Command, {static_cast<std::uint8_t>(t)}});
  EXPECT_EQ(s.last_index(), 5u);
  EXPECT_EQ(s.entry(3).term, 3u);
  s.truncate_from(4);
  EXPECT_EQ(s.last_index(), 3u);
  EXPECT_THROW(s.entry(4), std::out_of_range);
  // Compaction keeps the suffix.
  s.save_snapshot({2, 2, Configuration::of({0, 1}), {42}});
  EXPECT_EQ(s.first_index(), 3u);
  EXPECT_EQ(s.last_index(), 3u);
  EXPECT_EQ(s.entry(3).data, (Bytes{3}));
  // A snapshot past the end empties the log.
  s.save_snapshot({10, 4, Configuration::of({0}), {}});
  EXPECT_EQ(s.last_index(), 10u);
  EXPECT_EQ(s.log_size(), 0u);
  EXPECT_THROW(s.save_snapshot({9, 4, {}, {}}), std::logic_error);
  s.save_term_and_vote(7, 2);
  EXPECT_EQ(s.term(), 7u);
  EXPECT_EQ(s.vote(), 2u);
}

}  // namespace
}  // namespace swarmlab::core::raft
