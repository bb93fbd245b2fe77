// libFuzzer target for the replicated all-reduce's data messages and step-log entries
// (core/allreduce/; tests/fuzz/run_fuzz.sh allreduce builds and runs it).
//
// Each input is (1) decoded as a chunk message: decode_chunk(), and then the codec on its
// payload, must throw DecodeError or give a message that encodes back to the same bytes; (2)
// applied to a step log, which must never throw; and (3) delivered, mid-round, to a replica of a
// running all-reduce of four groups of one replica each, or five (an extra group folded in), from
// a partner and from a peer of another group, carrying real values. The round must
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
    try {
      core::codec::decode(d.header.codec, d.payload, values);
    } catch (const core::DecodeError&) {
      return;  // a payload the codec rejects (a replica counts it as rejected)
    }
  }
  const core::Message again = core::allreduce::encode_chunk(d.header, values);
  // fp16 payloads may hold NaNs whose bits decode/encode changes; the header must match exactly.
  if (d.header.codec == core::codec::Codec::Fp32 && again.bytes != m.bytes) std::abort();
  if (again.bytes.size() != m.bytes.size()) std::abort();
}

// P groups of one replica (4, or 5 with an extra folded into group 0), 4,096 elements in 1 KiB
// parts, in the memory world.
struct Round {
  explicit Round(std::uint32_t P) : world(P, core::testing::PeerSpec{0.005, 50e6, 0}, 3) {
    for (PeerId p = 0; p < P; ++p) {
      peers.push_back(std::make_unique<core::allreduce::ReplicaPeer>(
          world.env(p), core::allreduce::replica_group_raft_config(p + 1), std::vector<PeerId>{p}));
      world.env(p).set_sink(peers.back().get());
    }
    world.run_for(1.0);
    core::allreduce::ReplicaGroupPlan plan;
    for (PeerId p = 0; p < P; ++p) {
      plan.groups.push_back({p});
      plan.weights.push_back(p + 1.0);
    }
    plan.length = 4096;
    plan.part_bytes = 1024;
    values.assign(P, std::vector<float>(4096));
    for (PeerId p = 0; p < P; ++p)
      for (std::size_t i = 0; i < 4096; ++i) values[p][i] = static_cast<float>((p + 1) * 0.25 + i * 1e-3);
    const double total = P * (P + 1) / 2.0;
    expected.assign(4096, 0.0f);
    for (std::size_t i = 0; i < 4096; ++i) {
      double sum = 0;
      for (PeerId p = 0; p < P; ++p) sum += (p + 1.0) * values[p][i];
      expected[i] = static_cast<float>(sum / total);
    }
    done.assign(P, std::nullopt);
    for (PeerId p = 0; p < P; ++p)
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

  // Odd-sized inputs go to a round with an extra group: one-sided steps to fold it in and serve it.
  const std::uint32_t P = size % 2 ? 5 : 4;
  Round r(P);
  r.world.run_for(0.002);  // mid-round
  core::Message m;
  m.bytes.assign(in.begin(), in.end());
  // From its partner at the first exchange step and from another group's peer. Not from the extra
  // it folds in: that one's first part, well formed, is its data (nothing tells a forgery apart),
  // and the round would rightly average it.
  r.peers[0]->handle(2, m);
  r.peers[0]->handle(1, m);
  r.world.run_for(10);
  for (PeerId p = 0; p < P; ++p) {
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
  h.blocks = {{3, 1, false}, {3, 1, false}};
  out.write("part0_real", core::allreduce::encode_chunk(h, std::vector<float>(256, 0.5f)).bytes);
  h.part = 1;
  h.first_element = 256;
  h.blocks.clear();
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
  // Five groups: extra 4 folds its whole vector into group 0 at step 0 and is served at step 5.
  ChunkHeader fold;
  fold.round_id = 1;
  fold.from_group = 4;
  fold.parts = 16;
  fold.elements = 256;
  fold.blocks.assign(4, {5, 1, false});
  out.write("fold_part0_real", core::allreduce::encode_chunk(fold, std::vector<float>(256, 1.25f)).bytes);
  pull.kind = ChunkKind::Pull;
  pull.from_group = 4;
  pull.step = 5;
  out.write("pull_serve", core::allreduce::encode_chunk(pull, {}).bytes);
  return out.done();
}

#endif
