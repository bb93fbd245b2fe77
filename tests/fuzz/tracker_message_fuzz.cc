// libFuzzer target for the dataset trackers' decoders (tests/fuzz/run_fuzz.sh tracker builds and
// runs it; core/tracker/README.md).
//
// Each input is (1) decoded as a tracker command, as a result of each op and as a state machine
// snapshot: every decoder must either throw DecodeError or return something that encodes back to
// the same bytes (the encodings are canonical), and a rejected snapshot must leave the machine's
// state unchanged; (2) applied as a command to a populated TrackerStateMachine, which must answer
// without throwing; (3) delivered to a peer's TrackerHost serving a one-replica tracker group, as a
// message and as the command of a ClientRequest, after which the group must still serve a Query.
// The input is also decoded as a reboot request and reply (canonical round trip), and the host
// serves reboots and has a busy TrackerRebooter attached, so a reboot message reaches both sides;
// when the input founded a new generation there, that replica must be running instead. Last, it is
// decoded as a bootstrap message (canonical round trip) and delivered to a bootstrap server and to a
// client with requests in flight, which must go on answering and asking.
//
// Built with -DTRACKER_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/raft/messages.h"
#include "core/tracker/bootstrap_client.h"
#include "core/tracker/bootstrap_messages.h"
#include "core/tracker/bootstrap_server.h"
#include "core/tracker/client.h"
#include "core/tracker/commands.h"
#include "core/tracker/group.h"
#include "core/tracker/reboot.h"
#include "core/tracker/reboot_messages.h"
#include "core/tracker/replica.h"
#include "core/tracker/state_machine.h"
#include "support/memory_world.h"

namespace {

using namespace swarmlab;
using core::tracker::Bytes;
using core::tracker::TrackerCommand;
using core::tracker::TrackerOp;
using core::tracker::TrackerStateMachine;

TrackerCommand command(TrackerOp op, std::uint64_t seq, std::string text = {}, core::PeerId peer = 0,
                       std::uint64_t size = 0) {
  TrackerCommand c;
  c.op = op;
  c.client = 3;
  c.seq = seq;
  c.text = std::move(text);
  c.peer = peer;
  c.size = size;
  return c;
}

// The commands that build a small dataset: two files, a contributor, a downloader, a seeder.
std::vector<TrackerCommand> script() {
  return {command(TrackerOp::CreateDataset, 1, "fashion-mnist", 1), command(TrackerOp::AddFile, 2, "train.gz", 0, 26421880),
          command(TrackerOp::AddFile, 3, "test.gz", 0, 4422102), command(TrackerOp::RecordContribution, 4, "train.gz", 1),
          command(TrackerOp::DownloadStarted, 5, {}, 2), command(TrackerOp::DownloadCompleted, 6, "test.gz", 2),
          command(TrackerOp::DownloadCompleted, 7, "test.gz", 5), command(TrackerOp::DownloadCompleted, 8, "train.gz", 5)};
}

// A script command as the leader logs it, from the peer allowed to send it (the creator, peer 1,
// adds the files).
Bytes entry(const TrackerCommand& c) {
  return core::tracker::stamp_tracker_command(c.op == TrackerOp::AddFile ? 1 : c.peer, core::tracker::encode_tracker_command(c));
}

TrackerStateMachine populated() {
  TrackerStateMachine m;
  for (const TrackerCommand& c : script()) m.apply(entry(c));
  return m;
}

void check_decoders(std::span<const std::uint8_t> in) {
  try {
    const TrackerCommand c = core::tracker::decode_tracker_command(in);
    if (core::tracker::encode_tracker_command(c) != Bytes(in.begin(), in.end())) std::abort();
  } catch (const core::DecodeError&) {
  }
  try {
    const auto e = core::tracker::decode_tracker_entry(in);
    if (core::tracker::stamp_tracker_command(e.origin, core::tracker::encode_tracker_command(e.command)) !=
        Bytes(in.begin(), in.end()))
      std::abort();
  } catch (const core::DecodeError&) {
  }
  for (std::uint8_t op = 1; op <= 8; ++op) {
    try {
      const auto r = core::tracker::decode_tracker_result(in, static_cast<TrackerOp>(op));
      if (core::tracker::encode_tracker_result(r) != Bytes(in.begin(), in.end())) std::abort();
    } catch (const core::DecodeError&) {
    }
  }
  try {
    const auto q = core::tracker::decode_reboot_request(in);
    if (core::tracker::encode(q) != Bytes(in.begin(), in.end())) std::abort();
  } catch (const core::DecodeError&) {
  }
  try {
    const auto r = core::tracker::decode_reboot_reply(in);
    if (core::tracker::encode(r) != Bytes(in.begin(), in.end())) std::abort();
  } catch (const core::DecodeError&) {
  }
  try {
    const auto b = core::tracker::decode_bootstrap_message(in);
    if (core::tracker::encode(b) != Bytes(in.begin(), in.end())) std::abort();
  } catch (const core::DecodeError&) {
  }
  TrackerStateMachine m = populated();
  const Bytes before = m.snapshot();
  try {
    m.restore(in);
    if (m.snapshot() != Bytes(in.begin(), in.end())) std::abort();
  } catch (const core::DecodeError&) {
    if (m.snapshot() != before) std::abort();
  }
}

// A one-replica tracker group on peer 0 of a memory world, the dataset built by `script`. The host
// serves reboots, and its rebooter waits for peer 1 (which hosts nothing) to answer one.
struct World {
  World() : net(2, core::testing::PeerSpec{0, 0, 0}, 5), host(net.env(0)), rebooter(net.env(0)) {
    core::tracker::TrackerGroupOptions o;
    o.replicas = 1;
    cfg = core::tracker::tracker_raft_config("fashion-mnist", o);
    net.env(0).set_sink(&host);
    host.host(cfg, core::raft::MemoryStorage(core::raft::Configuration::of({0})), {0});
    host.serve_reboots(o);
    host.attach_rebooter(rebooter);
    net.run_for(1.0);
    for (const TrackerCommand& c : script()) node().propose(entry(c));
    net.run_for(0.1);
    const core::tracker::TrackerSnapshot snapshot{"cifar-10", 0, populated().snapshot(), 0, 0};
    rebooter.reboot(snapshot, {{1, core::dht::NodeId::of_key("peer 1", core::dht::kHydraIdBits)}}, o,
                    [](const core::tracker::RebootOutcome&) {});
  }
  ~World() { host.detach_rebooter(); }
  core::raft::RaftNode& node() { return *host.replica(cfg.group)->node(); }
  core::testing::MemoryWorld net;
  core::tracker::TrackerHost host;
  core::tracker::TrackerRebooter rebooter;
  core::raft::RaftConfig cfg;
};

}  // namespace

#ifndef TRACKER_FUZZ_MAKE_CORPUS

// A bootstrap server at peer 0 with a dataset listed, and a client at peer 1 with one request of
// each kind in flight. The input reaches both; afterwards the server still answers a fresh client.
void check_bootstrap(std::span<const std::uint8_t> in) {
  core::testing::MemoryWorld net(3, core::testing::PeerSpec{0.01}, 6);
  core::tracker::BootstrapServer server(net.env(0), 2);
  core::tracker::BootstrapClient client(net.env(1), 0, 0.05, 4);
  core::tracker::BootstrapClient fresh(net.env(2), 0, 0.05, 4);
  net.env(0).set_sink(&server);
  net.env(1).set_sink(&client);
  net.env(2).set_sink(&fresh);
  server.directory().register_dataset("fashion-mnist", 1);
  client.assign_id([](std::optional<core::dht::NodeId>) {});
  client.register_dataset("cifar-10", [](std::optional<bool>) {});
  client.report_leader("fashion-mnist", 0, 1, [](std::optional<bool>) {});
  client.find_tracker("fashion-mnist", [](std::optional<std::optional<core::tracker::TrackerLocation>>) {});
  client.list_datasets([](std::optional<std::vector<std::string>>) {});
  client.find_peers(20, [](std::optional<std::vector<core::PeerId>>) {});
  const core::Message message{Bytes(in.begin(), in.end()), 0};
  server.handle(1, message);
  client.handle(0, message);
  net.run_for(1.0);
  std::optional<std::vector<std::string>> titles;
  fresh.list_datasets([&](std::optional<std::vector<std::string>> t) { titles = std::move(t); });
  net.run_for(1.0);
  if (!titles || titles->empty()) std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_decoders(in);
  check_bootstrap(in);
  TrackerStateMachine m = populated();
  // The input as a log entry, and as a command stamped by a leader (from the creator, and from a
  // stranger): a well-formed result every time, an error status at worst.
  TrackerOp op = TrackerOp::AddFile;  // what a malformed command's result decodes as
  try {
    op = core::tracker::decode_tracker_entry(in).command.op;
  } catch (const core::DecodeError&) {
  }
  core::tracker::decode_tracker_result(m.apply(in), op);
  op = TrackerOp::AddFile;
  try {
    op = core::tracker::decode_tracker_command(in).op;
  } catch (const core::DecodeError&) {
  }
  for (const core::PeerId origin : {1u, 77u})
    core::tracker::decode_tracker_result(m.apply(core::tracker::stamp_tracker_command(origin, in)), op);

  World w;
  w.host.handle(1, core::Message{Bytes(in.begin(), in.end()), 0});
  core::raft::RaftMessage request;
  request.kind = core::raft::MessageKind::ClientRequest;
  request.group = w.cfg.group;
  request.request_id = 1;
  request.data.assign(in.begin(), in.end());
  w.host.handle(1, core::Message{core::raft::encode(request), 0});
  w.net.run_for(1.0);
  if (w.host.reboots_hosted() > 0) {
    // The input was a reboot this host accepted (reboots are not authenticated): the generation it
    // founded runs in place of whatever it superseded.
    if (w.host.groups().empty()) std::abort();
    for (std::uint64_t g : w.host.groups())
      if (!w.host.replica(g)->running()) std::abort();
    return 0;
  }
  // A hostile message may depose the leader (a higher term): alone in its group, it is elected again.
  for (int i = 0; i < 30 && !w.node().is_leader(); ++i) w.net.run_for(0.1);
  // The group still serves: a Query through the log is answered with the dataset.
  const auto index = w.node().propose(entry(command(TrackerOp::Query, 0)));
  if (!index) std::abort();
  w.net.run_for(0.1);
  if (w.node().applied_index() < *index) std::abort();
  if (!w.host.replica(w.cfg.group)->machine()->info().created) std::abort();
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

// One seed per command, per result kind, a snapshot, and a Raft ClientRequest for the group.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  using namespace core::tracker;
  const char* names[] = {"create", "add_file", "add_file_2", "contribution", "download_started",
                         "download_completed", "download_completed_2", "download_completed_seeder"};
  std::size_t i = 0;
  for (const TrackerCommand& c : script()) corpus.write("command_" + std::string(names[i++]), encode_tracker_command(c));
  corpus.write("command_remove_peer", encode_tracker_command(command(TrackerOp::RemovePeer, 9, {}, 2)));
  corpus.write("command_query", encode_tracker_command(command(TrackerOp::Query, 10)));
  corpus.write("command_export", encode_tracker_command(command(TrackerOp::Export, 11)));
  corpus.write("entry_add_file", stamp_tracker_command(1, encode_tracker_command(script()[1])));
  TrackerStateMachine m = populated();
  corpus.write("snapshot", m.snapshot());
  corpus.write("result_query", encode_tracker_result({TrackerStatus::Ok, m.info(), {}}));
  corpus.write("result_status", encode_tracker_result({TrackerStatus::NoSuchFile, std::nullopt, {}}));
  World w;
  core::raft::RaftMessage request;
  request.kind = core::raft::MessageKind::ClientRequest;
  request.group = w.cfg.group;
  request.request_id = 7;
  request.data = encode_tracker_command(command(TrackerOp::AddFile, 12, "extra.gz", 0, 100));
  corpus.write("client_request", core::raft::encode(request));
  RebootRequest reboot;
  reboot.request_id = 1;
  reboot.title = "fashion-mnist";
  reboot.generation = 1;
  reboot.members = {0};
  reboot.candidates = {0};
  reboot.state = m.snapshot();
  corpus.write("reboot_request", encode(reboot));
  corpus.write("reboot_reply", encode(RebootReply{1, 1, RebootStatus::Hosting}));
  BootstrapMessage b;
  b.request_id = 2;
  b.kind = BootstrapKind::ReportLeader;
  b.title = "fashion-mnist";
  b.term = 3;
  b.leader = 1;
  corpus.write("bootstrap_report_leader", encode(b));
  b.kind = BootstrapKind::TrackerFound;
  b.accepted = true;
  b.generation = 1;
  corpus.write("bootstrap_tracker_found", encode(b));
  b = BootstrapMessage{};
  b.kind = BootstrapKind::Datasets;
  b.request_id = 5;
  b.titles = {"cifar-10", "fashion-mnist"};
  corpus.write("bootstrap_datasets", encode(b));
  b = BootstrapMessage{};
  b.kind = BootstrapKind::Peers;
  b.request_id = 6;
  b.peers = {2, 0};
  corpus.write("bootstrap_peers", encode(b));
  b = BootstrapMessage{};
  b.kind = BootstrapKind::FindPeers;
  b.request_id = 7;
  b.count = 20;
  corpus.write("bootstrap_find_peers", encode(b));
  corpus.write("garbage", {0x06, 0x07, 0xff});
  return corpus.done();
}

#endif
