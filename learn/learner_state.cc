#include "learn/learner_state.h"

#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/training/learner.h"

namespace swarmlab::learn {
namespace {

static_assert(std::endian::native == std::endian::little, "states are written as little-endian values");

constexpr std::uint32_t kStateMagic = 0x534C5753;  // "SWLS" little-endian
constexpr std::uint32_t kStateFormat = 1;
constexpr std::size_t kStateHeader = 4 + 4 + 8 + 8 + 8 + 8 + 4;

// Writes at `to` and moves past what it wrote (the buffer is sized first).
template <class T>
void put(std::uint8_t*& to, T v) {
  std::memcpy(to, &v, sizeof v);
  to += sizeof v;
}
template <class T>
T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

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
  std::vector<std::uint8_t> out(learner_state_bytes({identity, n, static_cast<std::uint32_t>(state.vectors.size())}));
  std::uint8_t* to = out.data();
  put(to, kStateMagic);
  put(to, kStateFormat);
  put(to, identity);
  put(to, state.steps);
  put(to, state.inner_steps);
  put(to, n);
  put(to, static_cast<std::uint32_t>(state.vectors.size()));
  for (const std::vector<float>& v : state.vectors) {
    if (v.empty()) continue;  // (memcpy from no storage)
    std::memcpy(to, v.data(), v.size() * sizeof(float));
    to += v.size() * sizeof(float);
  }
  put(to, crc_of(out.data(), out.size() - 4));
  return out;
}

LearnerState decode_learner_state(std::span<const std::uint8_t> bytes, const LearnerStateShape& expected,
                                  std::string_view model) {
  if (bytes.size() < kStateHeader)
    throw StateError("learner state: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                     std::to_string(kStateHeader) + "-byte header");
  const std::uint8_t* p = bytes.data();
  if (get<std::uint32_t>(p) != kStateMagic) throw StateError("learner state: not a swarmlab learner state (bad magic)");
  if (get<std::uint32_t>(p + 4) != kStateFormat)
    throw StateError("learner state: format " + std::to_string(get<std::uint32_t>(p + 4)) + ", expected " +
                     std::to_string(kStateFormat));
  const std::uint64_t identity = get<std::uint64_t>(p + 8);
  if (identity != expected.identity)
    throw StateError("learner state of another model: identity " + hex(identity) + ", expected " +
                     hex(expected.identity) + " (" + std::string(model) + ")");
  LearnerState s;
  s.steps = get<std::uint64_t>(p + 16);
  s.inner_steps = get<std::uint64_t>(p + 24);
  const std::uint64_t n = get<std::uint64_t>(p + 32);
  const std::uint32_t k = get<std::uint32_t>(p + 40);
  if (n != expected.values || k != expected.vectors)
    throw StateError("learner state: " + std::to_string(k) + " vectors of " + std::to_string(n) + " values, expected " +
                     std::to_string(expected.vectors) + " of " + std::to_string(expected.values));
  const std::uint64_t size = learner_state_bytes(expected);
  if (bytes.size() != size)
    throw StateError("learner state: " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(size) +
                     (bytes.size() < size ? " (truncated)" : " (trailing bytes)"));
  if (crc_of(p, size - 4) != get<std::uint32_t>(p + size - 4))
    throw StateError("learner state: checksum mismatch (corrupt)");
  for (std::uint32_t i = 0; i < k; ++i) {
    std::vector<float> v(n);
    std::memcpy(v.data(), p + kStateHeader + std::uint64_t{i} * n * 4, n * 4);
    for (float f : v)
      if (!std::isfinite(f)) throw StateError("learner state: vector " + std::to_string(i) + " holds non-finite values");
    s.vectors.push_back(std::move(v));
  }
  return s;
}

}  // namespace swarmlab::learn
