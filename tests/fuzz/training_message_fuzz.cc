// libFuzzer target for the training peer's own wire decoders (tests/fuzz/run_fuzz.sh training):
// progress records (core/progress/peer_progress.h) and state-download messages
// (core/training/state_messages.h). Any bytes either decode into a value that survives an
// encode/decode round trip unchanged, or throw core::DecodeError. Nothing else escapes.
// The same bytes are also a downloaded state handed to the simulator's learner
// (sim/binding/virtual_learner.h, with values): it either refuses them with a StateError or
// takes them, and then exports exactly those bytes.
//
// Built with -DTRAINING_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/progress/peer_progress.h"
#include "core/training/state_messages.h"
#include "core/wire.h"
#include "sim/binding/virtual_learner.h"
#include "support/memory_world.h"
#include "tests/fuzz/fuzz_message.h"

namespace {

using namespace swarmlab;

void check_progress(std::span<const std::uint8_t> bytes) {
  try {
    const core::progress::PeerProgress p = core::progress::decode_progress(bytes);
    if (!(core::progress::decode_progress(core::progress::encode_progress(p)) == p)) std::abort();
  } catch (const core::DecodeError&) {
  }
}

// The bytes make a message as tests/fuzz/fuzz_message.h says.
void check_state(std::span<const std::uint8_t> bytes) {
  const auto fuzzed = swarmlab::fuzz::message_from_fuzz(bytes);
  if (!fuzzed) return;
  const auto& m = *fuzzed;
  try {
    const core::training::StateMessage s = core::training::decode_state(m);
    const core::Message again = core::training::encode_state(s);
    if (again.bytes != m.bytes || again.virtual_bytes != m.virtual_bytes) std::abort();
  } catch (const core::DecodeError&) {
  }
}

// A state download's bytes as the simulated learner of a 4-parameter model takes them.
void check_virtual_state(std::span<const std::uint8_t> bytes) {
  static core::testing::MemoryWorld world(1);
  sim::VirtualLearnerOptions options;
  options.parameters = 4;
  options.values.emplace();
  sim::VirtualLearner learner(world.env(0), options);
  try {
    learner.import_state(bytes);
  } catch (const core::training::StateError&) {
    return;
  }
  const std::vector<std::uint8_t> again = learner.export_state();
  if (!std::equal(again.begin(), again.end(), bytes.begin(), bytes.end())) std::abort();
}

}  // namespace

#ifdef TRAINING_FUZZ_MAKE_CORPUS
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  int n = 0;
  auto write = [&](const std::vector<std::uint8_t>& bytes) {
    std::ofstream(dir + "/seed-" + std::to_string(n++), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  // Progress records: the input is the record itself.
  write(core::progress::encode_progress({7, 12, 345, 67.5, 1234.25, true, 0x0123456789abcdefULL}));
  write(core::progress::encode_progress({0, 0, 0, 0, 0, false, 0}));
  // State messages: flag byte 0 (carried), then the message.
  core::training::StateMessage request;
  request.request_id = 9;
  core::training::StateMessage header;
  header.kind = core::training::StateKind::Header;
  header.request_id = 9, header.step = 40, header.lineage = 77, header.total_bytes = 5, header.chunks = 1;
  core::training::StateMessage chunk;
  chunk.kind = core::training::StateKind::Chunk;
  chunk.request_id = 9, chunk.bytes = 5, chunk.payload = {1, 2, 3, 4, 5};
  core::training::StateMessage updates;
  updates.kind = core::training::StateKind::UpdatesRequest;
  updates.request_id = 10, updates.step = 38, updates.lineage = 75;
  core::training::StateMessage refused;
  refused.kind = core::training::StateKind::Refused;
  refused.request_id = 10;
  for (const auto* s : {&request, &header, &chunk, &updates, &refused}) {
    std::vector<std::uint8_t> bytes = {0};
    const core::Message m = core::training::encode_state(*s);
    bytes.insert(bytes.end(), m.bytes.begin(), m.bytes.end());
    write(bytes);
  }
  // A virtual learner's state: 4 parameters after one averaged step.
  static core::testing::MemoryWorld world(1);
  sim::VirtualLearnerOptions options;
  options.parameters = 4;
  options.values.emplace();
  options.values->fill = [](std::span<float> v) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * static_cast<float>(i);
  };
  sim::VirtualLearner learner(world.env(0), options);
  learner.begin_averaging(1);
  learner.apply_averaged();
  write(learner.export_state());
  return 0;
}
#else
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  check_progress(bytes);
  check_state(bytes);
  check_virtual_state(bytes);
  return 0;
}
#endif
