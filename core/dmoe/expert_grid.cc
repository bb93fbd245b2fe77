#include "core/dmoe/expert_grid.h"

#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::dmoe {

void ExpertGrid::check() const {
  if (layer.empty() || layer.size() > kMaxLayerNameBytes)
    throw std::invalid_argument("expert grid: layer name must have 1 to " + std::to_string(kMaxLayerNameBytes) + " bytes");
  for (const char c : layer)
    if (c <= ' ' || c > '~' || c == '.')
      throw std::invalid_argument("expert grid: layer name \"" + layer + "\" must be printable ASCII without spaces or '.'");
  if (dims < 1 || dims > kMaxGridDims)
    throw std::invalid_argument("expert grid: dims must be 1 to " + std::to_string(kMaxGridDims) + ", got " + std::to_string(dims));
  if (side < 1 || side > kMaxGridSide)
    throw std::invalid_argument("expert grid: side must be 1 to " + std::to_string(kMaxGridSide) + ", got " + std::to_string(side));
}

bool ExpertGrid::contains(const ExpertUid& uid) const {
  if (uid.size() != dims) return false;
  for (const std::uint32_t c : uid)
    if (c >= side) return false;
  return true;
}

std::uint64_t ExpertGrid::capacity() const {
  std::uint64_t n = 1;
  for (std::uint32_t i = 0; i < dims; ++i) {
    if (n > (1ull << 63) / side) return 1ull << 63;
    n *= side;
  }
  return n;
}

ExpertUid ExpertGrid::uid_at(std::uint64_t index) const {
  if (index >= capacity()) throw std::out_of_range("expert grid: uid index beyond the grid");
  ExpertUid uid(dims);
  for (std::uint32_t i = dims; i-- > 0;) {
    uid[i] = static_cast<std::uint32_t>(index % side);
    index /= side;
  }
  return uid;
}

std::string uid_text(std::span<const std::uint32_t> uid) {
  std::string out;
  for (std::size_t i = 0; i < uid.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(uid[i]);
  }
  return out;
}

std::string prefix_key(const ExpertGrid& grid, std::span<const std::uint32_t> prefix) {
  if (prefix.size() >= grid.dims) throw std::invalid_argument("expert grid: a prefix is shorter than the grid's dims");
  std::string key = grid.layer + '.';
  for (const std::uint32_t c : prefix) key += std::to_string(c) + '.';
  return key;
}

std::string checkpoint_key(const ExpertGrid& grid, const ExpertUid& uid) {
  return grid.layer + ".checkpoint." + uid_text(uid);
}

namespace {

std::vector<std::uint8_t> varint_bytes(std::uint64_t v) {
  std::vector<std::uint8_t> out;
  Writer(out).varint(v);
  return out;
}

// The bytes as exactly one varint below `limit`.
std::optional<std::uint64_t> parse_varint(std::span<const std::uint8_t> bytes, std::uint64_t limit) {
  try {
    Reader r(bytes);
    const std::uint64_t v = r.varint();
    r.finish();
    if (v >= limit) return std::nullopt;
    return v;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::uint8_t> coordinate_subkey(std::uint32_t coordinate) { return varint_bytes(coordinate); }

std::optional<std::uint32_t> parse_coordinate_subkey(std::span<const std::uint8_t> bytes) {
  const auto v = parse_varint(bytes, kMaxGridSide);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::vector<std::uint8_t> encode_runtime(std::uint32_t runtime) { return varint_bytes(runtime); }

std::optional<std::uint32_t> decode_runtime(std::span<const std::uint8_t> bytes) {
  const auto v = parse_varint(bytes, 0x100000000ull);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::vector<std::uint8_t> encode_coordinates(std::span<const std::uint32_t> sorted_coordinates) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  w.varint(sorted_coordinates.size());
  for (const std::uint32_t c : sorted_coordinates) w.varint(c);
  return out;
}

std::optional<std::vector<std::uint32_t>> decode_coordinates(std::span<const std::uint8_t> bytes, std::uint32_t side) {
  try {
    Reader r(bytes);
    const std::size_t n = r.count(1);
    if (n == 0 || n > side) return std::nullopt;
    std::vector<std::uint32_t> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = r.varint();
      if (v >= side || (i > 0 && v <= out[i - 1])) return std::nullopt;
      out[i] = static_cast<std::uint32_t>(v);
    }
    r.finish();
    return out;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace swarmlab::core::dmoe
