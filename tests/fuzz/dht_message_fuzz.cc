// libFuzzer target for the DHT's wire messages (tests/fuzz/run_fuzz.sh builds and runs it).
//
// Each input is (1) decoded on its own: decode() must either throw DecodeError or return a message
// that survives an encode/decode round trip unchanged; and (2) delivered to a DHT node inside a tiny
// simulated world, from a peer the node has requests pending with, so that both the request
// handlers and the reply paths of lookups see it. The world then runs on (timeouts, lookups, more
// messages between real nodes) and the node must still answer a ping afterwards. Sanitizers catch
// the rest.
//
// The world's id width follows the input: 256-bit (Hydra) nodes when the flags byte says so, 160
// otherwise, so both widths' decoders and handlers are fuzzed (a message of the other width is
// malformed to a node, which the unit tests cover).
//
// Built with -DDHT_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dht/messages.h"
#include "core/dht/node.h"
#include "sim/engine.h"
#include "sim/network/latency_network.h"
#include "sim/binding/sim_world.h"

namespace {

using namespace swarmlab;
using core::dht::DhtMessage;
using core::dht::DhtNode;
using core::dht::MessageKind;

constexpr std::size_t kPeers = 3;
constexpr core::Seconds kFeedAt = 5.0;  // the world's clock when the input arrives

// The width an input's nodes use: bit 1 of its flags byte (the third), as the encoding puts it.
int width_of(std::span<const std::uint8_t> in) {
  return in.size() > 2 && (in[2] & 2) ? core::dht::kHydraIdBits : core::dht::kKademliaIdBits;
}

core::dht::WireLimits limits_for(int bits) {
  core::dht::WireLimits limits;
  limits.id_bits = bits;
  return limits;
}

// Three DHT nodes with ids of `bits` bits; node 0 has requests of every kind out to peers 1 and 2.
struct World {
  explicit World(int bits)
      : network(engine, std::vector<sim::LinkSpec>(kPeers, sim::LinkSpec{1e8, 1e8, 0.01})),
        world(engine, network, std::vector<sim::SimPeerSpec>(kPeers), 1) {
    core::dht::DhtConfig config;
    config.id_bits = bits;
    for (core::PeerId p = 0; p < kPeers; ++p) {
      nodes.push_back(std::make_unique<DhtNode>(world.env(p), core::dht::NodeId::random(world.env(p).rng(), bits), config));
      world.env(p).set_sink(nodes.back().get());
    }
    nodes[1]->bootstrap({0}, [](bool) {});
    nodes[2]->bootstrap({0, 1}, [](bool) {});
    engine.run_until(2.0);
    nodes[1]->store("stored", {1, 2, 3}, 1000, [](const core::dht::StoreResult&) {});
    nodes[2]->store("dict", {'s'}, {4, 5}, 1000, [](const core::dht::StoreResult&) {});
    // The store's lookup finishes just before the input arrives, so its STORE requests are out;
    // the get (of a key nobody holds) and a node lookup still have their requests out.
    engine.run_until(kFeedAt - 0.05);
    nodes[0]->store("mine", {9}, 500, [](const core::dht::StoreResult&) {});
    engine.run_until(kFeedAt - 0.001);
    nodes[0]->get("absent", [](std::optional<core::dht::Record>, const core::dht::LookupStats&) {});
    nodes[0]->find_nodes(core::dht::NodeId::of_key("somewhere", bits),
                         [](std::vector<core::dht::Contact>, const core::dht::LookupStats&) {});
    engine.run_until(kFeedAt);
  }

  sim::Engine engine;
  sim::LatencyNetwork network;
  sim::SimWorld world;
  std::vector<std::unique_ptr<DhtNode>> nodes;
};

// Transport addresses in a decoded message must name peers of this world (the simulator rejects
// sends to unknown peers as a programming error; a live binding fails the connection instead), so
// contacts are folded onto the world's peers before the node sees them.
std::vector<std::uint8_t> fold_peers(std::span<const std::uint8_t> in, bool& changed) {
  changed = false;
  try {
    DhtMessage m = core::dht::decode(in, limits_for(width_of(in)));
    for (auto& c : m.contacts)
      if (c.peer >= kPeers) {
        c.peer %= kPeers;
        changed = true;
      }
    if (changed) return core::dht::encode(m);
  } catch (const core::DecodeError&) {
  }
  return {in.begin(), in.end()};
}

void check_round_trip(std::span<const std::uint8_t> in) {
  const core::dht::WireLimits limits = limits_for(width_of(in));
  DhtMessage m;
  try {
    m = core::dht::decode(in, limits);
  } catch (const core::DecodeError&) {
    return;
  }
  const DhtMessage again = core::dht::decode(core::dht::encode(m), limits);
  if (!(again == m)) std::abort();
}

}  // namespace

#ifndef DHT_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_round_trip(in);

  const int bits = width_of(in);
  World w(bits);
  bool changed = false;
  const std::vector<std::uint8_t> bytes = fold_peers(in, changed);
  w.nodes[0]->receive(1, bytes);
  w.nodes[0]->receive(2, bytes);
  w.engine.run_until(kFeedAt + 20);  // timeouts, lookups and stores run to completion

  // The node must still be alive and well: a ping from peer 1 gets an answer.
  DhtMessage ping;
  ping.kind = MessageKind::PingRequest;
  ping.id_bits = bits;
  ping.request_id = 1;
  ping.sender = w.nodes[1]->id();
  ping.sender_time = w.engine.now();
  const auto sent_before = w.nodes[0]->stats().messages_sent;
  if (!w.nodes[0]->receive(1, core::dht::encode(ping))) std::abort();
  if (w.nodes[0]->stats().messages_sent != sent_before + 1) std::abort();
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

// Writes one seed per message kind, with request ids that match requests node 0 has pending.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  for (int bits : {core::dht::kKademliaIdBits, core::dht::kHydraIdBits}) {
    const std::string suffix = bits == core::dht::kHydraIdBits ? "_256" : "";
    World probe(bits);
    const core::dht::NodeId peer1 = probe.nodes[1]->id();
    auto base = [&](MessageKind kind, std::uint64_t id) {
      DhtMessage m;
      m.kind = kind;
      m.id_bits = bits;
      m.request_id = id;
      m.sender = peer1;
      m.sender_time = kFeedAt;
      return m;
    };
    core::Rng rng(5);
    std::vector<core::dht::Contact> contacts;
    for (core::PeerId p = 0; p < kPeers; ++p) contacts.push_back({probe.nodes[p]->id(), p});
    contacts.push_back({core::dht::NodeId::random(rng, bits), 1});

    // Requests of every kind.
    corpus.write("ping" + suffix, core::dht::encode(base(MessageKind::PingRequest, 7)));
    DhtMessage fn = base(MessageKind::FindNodeRequest, 8);
    fn.target = core::dht::NodeId::random(rng, bits);
    corpus.write("find_node" + suffix, core::dht::encode(fn));
    DhtMessage fv = base(MessageKind::FindValueRequest, 9);
    fv.target = core::dht::NodeId::of_key("stored", bits);
    corpus.write("find_value" + suffix, core::dht::encode(fv));
    DhtMessage st = base(MessageKind::StoreRequest, 10);
    st.target = core::dht::NodeId::of_key("x", bits);
    st.value = {{1, 2}, 100};
    corpus.write("store" + suffix, core::dht::encode(st));
    st.subkey = core::dht::Bytes{'k'};
    corpus.write("store_subkey" + suffix, core::dht::encode(st));

    // Replies to whatever node 0 waits for from peer 1: find the ids by trying them.
    for (MessageKind kind : {MessageKind::FindNodeResponse, MessageKind::FindValueResponse,
                             MessageKind::StoreResponse, MessageKind::PingResponse}) {
      for (std::uint64_t id = 1; id < 200; ++id) {
        DhtMessage reply = base(kind, id);
        reply.contacts = contacts;
        if (kind == MessageKind::FindValueResponse)
          reply.record = core::dht::Record(core::dht::Dictionary{{{'a'}, {{1}, 50}}, {{'b'}, {{2}, 60}}});
        reply.stored = true;
        World w(bits);
        if (w.nodes[0]->receive(1, core::dht::encode(reply))) {
          corpus.write("reply_" + std::to_string(static_cast<int>(kind)) + suffix, core::dht::encode(reply));
          break;
        }
      }
    }
  }
  corpus.write("garbage", {1, 9, 0, 0});
  return corpus.done();
}

#endif
