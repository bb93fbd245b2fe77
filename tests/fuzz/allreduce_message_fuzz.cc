// libFuzzer target for the replicated all-reduce's data messages and step-log entries
// (core/allreduce/; tests/fuzz/run_fuzz.sh allreduce builds and runs it).
//
// Each input is (1) decoded as a chunk message: decode_chunk() must throw DecodeError or return a
// message that encodes back to the same bytes; (2) applied to a step log, which must never throw;
// and (3) delivered, mid-round, to a replica of a running all-reduce of four groups of one replica
// each (from its partner and from a peer of another group), carrying real values. The round must
// still finish with every element averaged and exact. Sanitizers catch the rest.
//
// Built with -DALLREDUCE_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/allreduce/chunk_message.h"
#include "core/allreduce/replica_peer.h"
#include "core/allreduce/step_log.h"
#include "core/wire.h"
#include "support/memory_world.h"
#include "tests/fuzz/corpus_writer.h"

namespace {

using namespace swarmlab;
using core::PeerId;
using core::allreduce::ChunkHeader;
using core::allreduce::ChunkKind;

void check_round_trip(std::span<const std::uint8_t> in) {
  core::Message m;
  m.bytes.assign(in.begin(), in.end());
  core::allreduce::DecodedChunk d;
  try {
    d = core::allreduce::decode_chunk(m);
  } catch (const core::DecodeError&) {
    return;
  }
  std::vector<float> values;
  if (d.has_payload) {
    values.resize(d.header.elements);
    core::codec::decode(d.header.codec, d.payload, values);
  }
  const core::Message again = core::allreduce::encode_chunk(d.header, values);
  // fp16 payloads may hold NaNs whose bits decode/encode changes; the header must match exactly.
  if (d.header.codec == core::codec::Codec::Fp32 && again.bytes != m.bytes) std::abort();
  if (again.bytes.size() != m.bytes.size()) std::abort();
}

// Four groups of one replica, 4,096 elements in 1 KiB parts, in the memory world.
struct Round {
  Round() : world(4, core::testing::PeerSpec{0.005, 50e6, 0}, 3) {
    for (PeerId p = 0; p < 4; ++p) {
      peers.push_back(std::make_unique<core::allreduce::ReplicaPeer>(
          world.env(p), core::allreduce::replica_group_raft_config(p + 1), std::vector<PeerId>{p}));
      world.env(p).set_sink(peers.back().get());
    }
    world.run_for(1.0);
    core::allreduce::ReplicaGroupPlan plan;
    plan.groups = {{0}, {1}, {2}, {3}};
    plan.weights = {1, 2, 3, 4};
    plan.length = 4096;
    plan.part_bytes = 1024;
    values.assign(4, std::vector<float>(4096));
    for (PeerId p = 0; p < 4; ++p)
      for (std::size_t i = 0; i < 4096; ++i) values[p][i] = static_cast<float>((p + 1) * 0.25 + i * 1e-3);
    for (std::size_t i = 0; i < 4096; ++i) expected.push_back((1 * values[0][i] + 2 * values[1][i] + 3 * values[2][i] + 4 * values[3][i]) / 10);
    done.assign(4, std::nullopt);
    for (PeerId p = 0; p < 4; ++p)
      peers[p]->start_round(plan, values[p], {}, [this, p](const core::allreduce::ReplicaOutcome& o) { done[p] = o; });
  }
  core::testing::MemoryWorld world;
  std::vector<std::unique_ptr<core::allreduce::ReplicaPeer>> peers;
  std::vector<std::vector<float>> values;
  std::vector<float> expected;
  std::vector<std::optional<core::allreduce::ReplicaOutcome>> done;
};

}  // namespace

#ifndef ALLREDUCE_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_round_trip(in);
  core::allreduce::StepLog log;
  log.apply(in);  // total: never throws
  try {
    log.restore(in);
  } catch (const core::DecodeError&) {
  }

  Round r;
  r.world.run_for(0.002);  // mid-round
  core::Message m;
  m.bytes.assign(in.begin(), in.end());
  r.peers[0]->handle(2, m);  // its partner at step 0
  r.peers[0]->handle(1, m);
  r.world.run_for(10);
  for (PeerId p = 0; p < 4; ++p) {
    if (!r.done[p] || !r.done[p]->completed || r.done[p]->fraction_averaged != 1.0) std::abort();
    for (std::size_t i = 0; i < 4096; ++i)
      if (std::abs(r.values[p][i] - r.expected[i]) > 1e-4) std::abort();
  }
  return 0;
}

#else

int main(int argc, char** argv) {
  fuzz::CorpusWriter out(argc, argv);
  if (!out.ok()) return 2;
  ChunkHeader h;
  h.round_id = 1;
  h.step = 0;
  h.from_group = 2;
  h.parts = 2;
  h.first_element = 0;
  h.elements = 256;
  h.block_weights = {3, 3};
  out.write("part0_real", core::allreduce::encode_chunk(h, std::vector<float>(256, 0.5f)).bytes);
  h.part = 1;
  h.first_element = 256;
  h.block_weights.clear();
  out.write("part1_real", core::allreduce::encode_chunk(h, std::vector<float>(256, 0.5f)).bytes);
  h.codec = core::codec::Codec::Fp16;
  out.write("part1_virtual", core::allreduce::encode_chunk(h, {}).bytes);
  ChunkHeader pull;
  pull.kind = ChunkKind::Pull;
  pull.round_id = 1;
  pull.from_group = 2;
  out.write("pull", core::allreduce::encode_chunk(pull, {}).bytes);
  pull.kind = ChunkKind::Busy;
  out.write("busy", core::allreduce::encode_chunk(pull, {}).bytes);
  out.write("step", core::allreduce::encode_step({1, 0, false}));
  return out.done();
}

#endif
