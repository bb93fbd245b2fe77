#include "learn/expert_checkpoint.h"

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/dmoe/expert_backend.h"
#include "core/wire.h"

namespace swarmlab::learn {
namespace {

constexpr std::uint32_t kCheckpointMagic = 0x58455753;  // "SWEX" little-endian
constexpr std::uint32_t kCheckpointFormat = 1;
constexpr std::size_t kCheckpointHeader = 4 + 4 + 4 + 4 + 8;

using core::dmoe::CheckpointError;

// Values in w1, b1, w2 and b2.
std::array<std::uint64_t, 4> tensor_values(std::uint32_t width, std::uint32_t hidden) {
  return {std::uint64_t{hidden} * width, hidden, std::uint64_t{width} * hidden, width};
}

// The bytes of `count` floats.
std::span<const std::uint8_t> float_bytes(const float* values, std::uint64_t count) {
  return {reinterpret_cast<const std::uint8_t*>(values), count * sizeof(float)};
}

}  // namespace

std::uint64_t expert_checkpoint_values(std::uint32_t width, std::uint32_t hidden) {
  return 2ull * width * hidden + hidden + width;
}

std::vector<std::uint8_t> encode_expert_checkpoint(std::uint32_t width, std::uint32_t hidden,
                                                   const ExpertCheckpoint& checkpoint) {
  const std::uint64_t n = expert_checkpoint_values(width, hidden);
  if (checkpoint.params.size() != n || checkpoint.adam_m.size() != n || checkpoint.adam_v.size() != n)
    throw std::invalid_argument("expert checkpoint: vectors of another size than the expert's");
  std::vector<std::uint8_t> out;
  out.reserve(kCheckpointHeader + 3 * n * 4);
  core::Writer w(out);
  w.u32(kCheckpointMagic);
  w.u32(kCheckpointFormat);
  w.u32(width);
  w.u32(hidden);
  w.u64(checkpoint.updates);
  w.raw(float_bytes(checkpoint.params.data(), n));
  std::uint64_t at = 0;
  for (const std::uint64_t values : tensor_values(width, hidden)) {
    w.raw(float_bytes(checkpoint.adam_m.data() + at, values));
    w.raw(float_bytes(checkpoint.adam_v.data() + at, values));
    at += values;
  }
  return out;
}

ExpertCheckpoint decode_expert_checkpoint(std::span<const std::uint8_t> bytes, std::uint32_t width,
                                          std::uint32_t hidden) {
  if (bytes.size() < kCheckpointHeader)
    throw CheckpointError("expert checkpoint: not a swarmlab expert checkpoint (no \"SWEX\" header)");
  // Every read below is within the checked size.
  core::Reader r(bytes);
  if (r.u32() != kCheckpointMagic)
    throw CheckpointError("expert checkpoint: not a swarmlab expert checkpoint (no \"SWEX\" header)");
  if (const std::uint32_t format = r.u32(); format != kCheckpointFormat)
    throw CheckpointError("expert checkpoint: format " + std::to_string(format) + ", expected " +
                          std::to_string(kCheckpointFormat));
  const std::uint32_t their_width = r.u32(), their_hidden = r.u32();
  if (their_width != width || their_hidden != hidden)
    throw CheckpointError("expert checkpoint: an expert of width " + std::to_string(their_width) + " and hidden " +
                          std::to_string(their_hidden) + ", expected " + std::to_string(width) + " and " +
                          std::to_string(hidden));
  const std::uint64_t n = expert_checkpoint_values(width, hidden);
  const std::uint64_t expected = kCheckpointHeader + 3 * n * 4;
  if (bytes.size() != expected)
    throw CheckpointError("expert checkpoint: " + std::to_string(bytes.size()) + " bytes, expected " +
                          std::to_string(expected));
  ExpertCheckpoint c;
  c.updates = r.u64();
  auto take = [&r](float* to, std::uint64_t values) {
    const std::span<const std::uint8_t> from = r.raw(values * 4);
    std::memcpy(to, from.data(), from.size());
  };
  c.params.resize(n);
  c.adam_m.resize(n);
  c.adam_v.resize(n);
  take(c.params.data(), n);
  std::uint64_t at = 0;
  for (const std::uint64_t values : tensor_values(width, hidden)) {
    take(c.adam_m.data() + at, values);
    take(c.adam_v.data() + at, values);
    at += values;
  }
  for (const std::vector<float>* v : {&c.params, &c.adam_m, &c.adam_v})
    for (float f : *v)
      if (!std::isfinite(f)) throw CheckpointError("expert checkpoint: a value that is not finite");
  return c;
}

}  // namespace swarmlab::learn
