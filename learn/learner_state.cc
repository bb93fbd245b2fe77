#include "learn/learner_state.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/training/learner.h"
#include "core/wire.h"

namespace swarmlab::learn {
namespace {

constexpr std::uint32_t kStateMagic = 0x534C5753;  // "SWLS" little-endian
constexpr std::uint32_t kStateFormat = 1;
constexpr std::size_t kStateHeader = 4 + 4 + 8 + 8 + 8 + 8 + 4;

std::uint32_t crc_of(const std::uint8_t* p, std::uint64_t n) {
  return static_cast<std::uint32_t>(crc32_z(0, p, static_cast<z_size_t>(n)));
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

using core::training::StateError;

}  // namespace

std::uint64_t learner_state_bytes(const LearnerStateShape& shape) {
  return kStateHeader + std::uint64_t{shape.vectors} * shape.values * 4 + 4;
}

std::vector<std::uint8_t> encode_learner_state(std::uint64_t identity, const LearnerState& state) {
  const std::uint64_t n = state.vectors.empty() ? 0 : state.vectors.front().size();
  for (const std::vector<float>& v : state.vectors)
    if (v.size() != n) throw std::invalid_argument("learner state: vectors of different sizes");
  std::vector<std::uint8_t> out;
  out.reserve(learner_state_bytes({identity, n, static_cast<std::uint32_t>(state.vectors.size())}));
  core::Writer w(out);
  w.u32(kStateMagic);
  w.u32(kStateFormat);
  w.u64(identity);
  w.u64(state.steps);
  w.u64(state.inner_steps);
  w.u64(n);
  w.u32(static_cast<std::uint32_t>(state.vectors.size()));
  for (const std::vector<float>& v : state.vectors)
    w.raw({reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(float)});
  w.u32(crc_of(out.data(), out.size()));
  return out;
}

LearnerState decode_learner_state(std::span<const std::uint8_t> bytes, const LearnerStateShape& expected,
                                  std::string_view model) {
  if (bytes.size() < kStateHeader)
    throw StateError("learner state: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                     std::to_string(kStateHeader) + "-byte header");
  // Every read below is within the checked size.
  core::Reader r(bytes);
  if (r.u32() != kStateMagic) throw StateError("learner state: not a swarmlab learner state (bad magic)");
  if (const std::uint32_t format = r.u32(); format != kStateFormat)
    throw StateError("learner state: format " + std::to_string(format) + ", expected " + std::to_string(kStateFormat));
  const std::uint64_t identity = r.u64();
  if (identity != expected.identity)
    throw StateError("learner state of another model: identity " + hex(identity) + ", expected " +
                     hex(expected.identity) + " (" + std::string(model) + ")");
  LearnerState s;
  s.steps = r.u64();
  s.inner_steps = r.u64();
  const std::uint64_t n = r.u64();
  const std::uint32_t k = r.u32();
  if (n != expected.values || k != expected.vectors)
    throw StateError("learner state: " + std::to_string(k) + " vectors of " + std::to_string(n) + " values, expected " +
                     std::to_string(expected.vectors) + " of " + std::to_string(expected.values));
  const std::uint64_t size = learner_state_bytes(expected);
  if (bytes.size() != size)
    throw StateError("learner state: " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(size) +
                     (bytes.size() < size ? " (truncated)" : " (trailing bytes)"));
  if (crc_of(bytes.data(), size - 4) != core::Reader(bytes.last(4)).u32())
    throw StateError("learner state: checksum mismatch (corrupt)");
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::span<const std::uint8_t> values = r.raw(n * 4);
    std::vector<float> v(n);
    std::memcpy(v.data(), values.data(), values.size());
    for (float f : v)
      if (!std::isfinite(f)) throw StateError("learner state: vector " + std::to_string(i) + " holds non-finite values");
    s.vectors.push_back(std::move(v));
  }
  return s;
}

}  // namespace swarmlab::learn
