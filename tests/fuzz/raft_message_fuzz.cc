// libFuzzer target for Raft's wire messages (tests/fuzz/run_fuzz.sh raft builds and runs it).
//
// Each input is (1) decoded on its own: decode() must either throw DecodeError or return a message
// that survives an encode/decode round trip unchanged; and (2) delivered to a running Raft group of
// three (a leader with a compacted log, followers, a client peer): to the leader as if from a
// follower and from the client, and to a follower as if from the leader and from the client. The
// world then runs on (heartbeats, timeouts, elections, snapshots). Whatever a hostile peer sends,
// no node may crash, and every node must still answer a vote request afterwards. Sanitizers catch
// the rest. (3) The same bytes read as a key-value result (the reply a client decodes,
// core/raft/kv_state_machine.h): DecodeError, or a result that survives a round trip.
//
// Built with -DRAFT_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "core/raft/kv_state_machine.h"
#include "core/raft/messages.h"
#include "core/raft/node.h"
#include "tests/core/raft/cluster.h"

namespace {

using namespace swarmlab;
using core::PeerId;
using core::raft::MessageKind;
using core::raft::RaftMessage;

constexpr PeerId kClient = 3;

// A group of three with a leader, a few committed writes and a compacted log.
struct World {
  static core::raft::testing::ClusterOptions options() {
    core::raft::testing::ClusterOptions o;
    o.servers = 3;
    o.clients = 1;
    o.seed = 11;
    o.raft.snapshot_threshold = 4;
    return o;
  }
  World() : cluster(options()) {
    leader = *cluster.run_until_leader(3.0, 0.2);
    follower = (leader + 1) % 3;
    for (int i = 0; i < 6; ++i) cluster.propose_put("k" + std::to_string(i % 3), std::to_string(i));
    cluster.run_for(0.2);
  }
  core::raft::RaftNode& node(PeerId p) { return *cluster.node(p); }

  core::raft::testing::Cluster cluster;
  PeerId leader = 0, follower = 1;
};

void check_round_trip(std::span<const std::uint8_t> in) {
  const core::raft::WireLimits limits;
  RaftMessage m;
  try {
    m = core::raft::decode(in, limits);
  } catch (const core::DecodeError&) {
    return;
  }
  const RaftMessage again = core::raft::decode(core::raft::encode(m), limits);
  if (!(again == m)) std::abort();
}

void check_kv_result(std::span<const std::uint8_t> in) {
  core::raft::KvResult r;
  try {
    r = core::raft::decode_kv_result(in);
  } catch (const core::DecodeError&) {
    return;
  }
  if (!(core::raft::decode_kv_result(core::raft::encode_kv_result(r)) == r)) std::abort();
}

}  // namespace

#ifndef RAFT_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_round_trip(in);
  check_kv_result(in);

  World w;
  const PeerId l = w.leader, f = w.follower;
  w.node(l).receive(f, in);
  w.node(l).receive(kClient, in);
  w.node(f).receive(l, in);
  w.node(f).receive(kClient, in);
  w.cluster.run_for(1.5);  // heartbeats, timeouts, elections and snapshots run on

  // Every node is still alive and answers a vote request (granted or not).
  for (PeerId p = 0; p < 3; ++p) {
    RaftMessage vote;
    vote.kind = MessageKind::VoteRequest;
    vote.term = std::min<core::raft::Term>(w.node(p).term(), core::raft::kMaxTermOrIndex);
    const auto sent = w.node(p).stats().messages_sent;
    if (!w.node(p).receive((p + 1) % 3, core::raft::encode(vote))) std::abort();
    if (w.node(p).stats().messages_sent != sent + 1) std::abort();
  }
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

// Writes one seed per message kind, with terms and indexes that match the world's state.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  using namespace core::raft;
  auto write = [&](const std::string& name, const RaftMessage& m) { corpus.write(name, encode(m)); };
  World w;
  RaftNode& lead = w.node(w.leader);
  const Term term = lead.term();
  const Index last = lead.last_index();

  RaftMessage m;
  m.kind = MessageKind::VoteRequest;
  m.term = term + 1;
  m.last_index = last;
  m.last_term = term;
  write("vote_request", m);
  m.pre_vote = true;
  write("pre_vote_request", m);

  m = {};
  m.kind = MessageKind::VoteReply;
  m.term = term;
  m.granted = true;
  write("vote_reply", m);

  m = {};
  m.kind = MessageKind::AppendEntries;
  m.term = term;
  m.prev_index = last;
  m.prev_term = term;
  m.leader_commit = lead.commit_index();
  write("heartbeat", m);
  m.entries.push_back({term, EntryType::Command, encode_kv_command({KvOp::Put, 9, 1, "k0", "fuzz", {}})});
  m.entries.push_back({term, EntryType::Config, encode_config(Configuration::of({0, 1, 2, 3}))});
  m.entries.push_back({term, EntryType::Noop, {}});
  m.leader_commit = last + 3;
  write("append_entries", m);
  m.prev_index = lead.snapshot_index() - 1;
  m.term = term + 1;
  write("append_entries_conflict", m);

  m = {};
  m.kind = MessageKind::AppendReply;
  m.term = term;
  m.success = true;
  m.index = last;
  write("append_reply", m);
  m.success = false;
  m.index = 1;
  write("append_reply_failure", m);

  m = {};
  m.kind = MessageKind::InstallSnapshot;
  m.term = term;
  m.last_index = last + 5;
  m.last_term = term;
  m.config = Configuration::of({0, 1, 2});
  m.data = w.cluster.server(w.leader).machine->snapshot();
  write("install_snapshot", m);

  m = {};
  m.kind = MessageKind::SnapshotReply;
  m.term = term;
  m.index = lead.snapshot_index();
  write("snapshot_reply", m);

  m = {};
  m.kind = MessageKind::ClientRequest;
  m.request_id = 1;
  m.data = encode_kv_command({KvOp::Cas, 9, 1, "k1", "new", "4"});
  write("client_request", m);

  m = {};
  m.kind = MessageKind::ClientReply;
  m.request_id = 1;
  m.status = ClientStatus::NotLeader;
  m.leader = w.leader;
  write("client_reply", m);

  corpus.write("garbage", {0x06, 0x03, 0x00, 0xff});
  const std::vector<std::uint8_t> got = core::raft::encode_kv_result({core::raft::KvStatus::Ok, "value"});
  corpus.write("kv_result", got);
  return corpus.done();
}

#endif
