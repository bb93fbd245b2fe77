#include "learn/expert_checkpoint.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/dmoe/expert_backend.h"

namespace swarmlab::learn {
namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are written as little-endian floats");

constexpr std::uint32_t kCheckpointMagic = 0x58455753;  // "SWEX" little-endian
constexpr std::uint32_t kCheckpointFormat = 1;
constexpr std::size_t kCheckpointHeader = 4 + 4 + 4 + 4 + 8;

using core::dmoe::CheckpointError;

// Values in w1, b1, w2 and b2.
std::array<std::uint64_t, 4> tensor_values(std::uint32_t width, std::uint32_t hidden) {
  return {std::uint64_t{hidden} * width, hidden, std::uint64_t{width} * hidden, width};
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
  std::vector<std::uint8_t> out(kCheckpointHeader + 3 * n * 4);
  std::uint8_t* to = out.data();
  auto put = [&to](const void* p, std::size_t size) {
    std::memcpy(to, p, size);
    to += size;
  };
  put(&kCheckpointMagic, 4);
  put(&kCheckpointFormat, 4);
  put(&width, 4);
  put(&hidden, 4);
  put(&checkpoint.updates, 8);
  put(checkpoint.params.data(), n * 4);
  std::uint64_t at = 0;
  for (const std::uint64_t values : tensor_values(width, hidden)) {
    put(checkpoint.adam_m.data() + at, values * 4);
    put(checkpoint.adam_v.data() + at, values * 4);
    at += values;
  }
  return out;
}

ExpertCheckpoint decode_expert_checkpoint(std::span<const std::uint8_t> bytes, std::uint32_t width,
                                          std::uint32_t hidden) {
  auto u32 = [&bytes](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  if (bytes.size() < kCheckpointHeader || u32(0) != kCheckpointMagic)
    throw CheckpointError("expert checkpoint: not a swarmlab expert checkpoint (no \"SWEX\" header)");
  if (u32(4) != kCheckpointFormat)
    throw CheckpointError("expert checkpoint: format " + std::to_string(u32(4)) + ", expected " +
                          std::to_string(kCheckpointFormat));
  if (u32(8) != width || u32(12) != hidden)
    throw CheckpointError("expert checkpoint: an expert of width " + std::to_string(u32(8)) + " and hidden " +
                          std::to_string(u32(12)) + ", expected " + std::to_string(width) + " and " +
                          std::to_string(hidden));
  const std::uint64_t n = expert_checkpoint_values(width, hidden);
  const std::uint64_t expected = kCheckpointHeader + 3 * n * 4;
  if (bytes.size() != expected)
    throw CheckpointError("expert checkpoint: " + std::to_string(bytes.size()) + " bytes, expected " +
                          std::to_string(expected));
  ExpertCheckpoint c;
  std::memcpy(&c.updates, bytes.data() + 16, 8);
  const std::uint8_t* from = bytes.data() + kCheckpointHeader;
  auto take = [&from](float* to, std::uint64_t values) {
    std::memcpy(to, from, values * 4);
    from += values * 4;
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
