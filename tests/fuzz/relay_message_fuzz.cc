// libFuzzer target for the circuit relay's frames (tests/fuzz/run_fuzz.sh relay builds and runs it;
// core/relay/relay_frame.h).
//
// Each input is (1) decoded on its own: decode_frame() must either throw DecodeError or return a
// frame that encodes back to the same bytes; and (2) delivered, as it arrived from the network, to
// the relay layers of a small collaboration (a public relay, a public peer, three NAT'd peers):
// to the relay from each NAT'd peer and from the public one, and to each NAT'd peer from the relay
// and from a peer that is not its relay. Then every layer must still carry a genuine relayed
// message end to end, whatever came before. Sanitizers catch the rest.
//
// Built with -DRELAY_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "core/relay/relay_frame.h"
#include "core/relay/relayed_environment.h"
#include "support/memory_world.h"
#include "support/recording_service.h"

namespace {

using namespace swarmlab::core;
using namespace swarmlab::core::relay;

// Peer 0 relays; 1 is public; 2, 3 and 4 are behind NAT.
struct World {
  World() {
    ReachabilityConfig c;
    c.nat = {Nat::None, Nat::None, Nat::Cone, Nat::Symmetric, Nat::Cone};
    c.relays = {{0, 1e9, 1e9}};
    reach = std::make_unique<Reachability>(c);
    for (PeerId p = 0; p < world.size(); ++p) {
      envs.push_back(std::make_unique<RelayedEnvironment>(world.env(p), *reach));
      sinks.push_back(std::make_unique<testing::RecordingService>());
      envs.back()->set_sink(sinks.back().get());
    }
  }
  testing::MemoryWorld world{5};
  std::unique_ptr<Reachability> reach;
  std::vector<std::unique_ptr<RelayedEnvironment>> envs;
  std::vector<std::unique_ptr<testing::RecordingService>> sinks;
};

void check_round_trip(std::span<const std::uint8_t> in) {
  RelayFrame f;
  try {
    f = decode_frame(in);
  } catch (const DecodeError&) {
    return;
  }
  const std::vector<std::uint8_t> again = encode_frame(f.kind, f.peer, f.payload);
  if (again.size() != in.size() || !std::equal(again.begin(), again.end(), in.begin())) std::abort();
}

}  // namespace

#ifndef RELAY_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_round_trip(in);

  World w;
  const Message m{std::vector<std::uint8_t>(in.begin(), in.end()), 0};
  for (PeerId from : {1u, 2u, 3u, 4u}) w.envs[0]->handle(from, m);
  for (PeerId to : {2u, 3u, 4u}) {
    w.envs[to]->handle(0, m);
    w.envs[to]->handle(1, m);
  }
  w.world.run();

  // A genuine relayed message still goes through, and arrives as from its sender.
  const std::size_t before = w.sinks[3]->got.size();
  w.envs[2]->send(3, Message{{42}, 0});
  w.world.run();
  if (w.sinks[3]->got.size() != before + 1 || w.sinks[3]->got.back().first != 2) std::abort();
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  const std::vector<std::uint8_t> payload{2, 7, 7, 7};  // a message of another service
  corpus.write("forward", encode_frame(FrameKind::Forward, 3, payload));
  corpus.write("forward_empty", encode_frame(FrameKind::Forward, 4));
  corpus.write("deliver", encode_frame(FrameKind::Deliver, 2, payload));
  corpus.write("unreachable", encode_frame(FrameKind::Unreachable, 3));
  corpus.write("forward_far_peer", encode_frame(FrameKind::Forward, 1u << 20, payload));
  corpus.write("nested", encode_frame(FrameKind::Forward, 3, encode_frame(FrameKind::Deliver, 2, payload)));
  return corpus.done();
}

#endif
