// libFuzzer target for what live learners receive from other peers (tests/fuzz/run_fuzz.sh learn):
// a downloaded learner state (learn/learner_state.h) and an expert checkpoint taken from the DHT
// (learn/expert_checkpoint.h), the bytes the libtorch learner and experts decode before any tensor
// is touched. The first byte picks the decoder; the rest is the message. Every input either throws
// the decoder's own error (StateError, CheckpointError) or decodes into a value that encodes back
// to the very bytes. Sanitizers catch the rest (overreads, allocations sized by a forged header).
//
// Built with -DLEARN_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/dmoe/expert_backend.h"
#include "core/training/learner.h"
#include "learn/expert_checkpoint.h"
#include "learn/learner_state.h"

namespace {

using namespace swarmlab;

// A DiLoCo-shaped state (four vectors) of a 3-value model, and an expert of width 2, hidden 3.
constexpr learn::LearnerStateShape kShape{0x0123456789abcdefULL, 3, 4};
constexpr std::uint32_t kWidth = 2, kHidden = 3;

bool same(const std::vector<std::uint8_t>& again, std::span<const std::uint8_t> in) {
  return std::equal(again.begin(), again.end(), in.begin(), in.end());
}

void check_state(std::span<const std::uint8_t> in) {
  learn::LearnerState s;
  try {
    s = learn::decode_learner_state(in, kShape, "fuzz model");
  } catch (const core::training::StateError&) {
    return;
  }
  if (s.vectors.size() != kShape.vectors) std::abort();
  if (!same(learn::encode_learner_state(kShape.identity, s), in)) std::abort();
}

void check_checkpoint(std::span<const std::uint8_t> in) {
  learn::ExpertCheckpoint c;
  try {
    c = learn::decode_expert_checkpoint(in, kWidth, kHidden);
  } catch (const core::dmoe::CheckpointError&) {
    return;
  }
  if (!same(learn::encode_expert_checkpoint(kWidth, kHidden, c), in)) std::abort();
}

void dispatch(std::span<const std::uint8_t> in) {
  if (in.empty()) return;
  if (in[0] % 2 == 0) check_state(in.subspan(1));
  else check_checkpoint(in.subspan(1));
}

}  // namespace

#ifndef LEARN_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dispatch(std::span<const std::uint8_t>(data, size));
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

// A genuine state and checkpoint of the shapes above, each after its selector byte.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  using swarmlab::fuzz::with_selector;
  learn::LearnerState s;
  s.steps = 12;
  s.inner_steps = 480;
  s.vectors = {{0.5f, -1, 2}, {0, 0, 0.25f}, {1e-3f, 2e-3f, 3e-3f}, {1, 1, 1}};
  corpus.write("state", with_selector(0, learn::encode_learner_state(kShape.identity, s)));
  learn::ExpertCheckpoint c;
  c.updates = 7;
  const std::uint64_t n = learn::expert_checkpoint_values(kWidth, kHidden);
  for (std::uint64_t i = 0; i < n; ++i) {
    c.params.push_back(0.125f * static_cast<float>(i));
    c.adam_m.push_back(-0.5f);
    c.adam_v.push_back(0.0625f);
  }
  corpus.write("checkpoint", with_selector(1, learn::encode_expert_checkpoint(kWidth, kHidden, c)));
  return corpus.done();
}

#endif
