#pragma once
// Where the experts of one decentralized mixture-of-experts layer live (docs/learning-at-home.md
// §2): a uid is a point (u_0, ..., u_{d-1}) of a d-dimensional grid with side M, and the DHT keys
// that announce it are built from its prefixes. Beam search (beam_search.h) walks the same keys.
//
// Key layout: the prefix (u_0, ..., u_{l-1}) of a layer "ffn" is the key "ffn." followed by each
// coordinate and a dot ("ffn.", "ffn.3.", "ffn.3.17."). A live prefix shorter than d − 1 is
// announced under its parent key with the next coordinate as the subkey (and an empty value). A
// prefix of length d − 1 (a leaf key) holds one entry per runtime: the subkey is the runtime's peer
// id and the value the last coordinates of the experts it hosts under that prefix. So one lookup
// of a prefix's key names every live continuation of it, and a runtime announces each of its leaf
// keys with one store however many experts it hosts there.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace swarmlab::core::dmoe {

inline constexpr std::uint32_t kMaxGridDims = 8;
inline constexpr std::uint32_t kMaxGridSide = 1u << 16;
inline constexpr std::size_t kMaxLayerNameBytes = 64;

// One coordinate per grid dimension, each below the grid's side.
using ExpertUid = std::vector<std::uint32_t>;

struct ExpertGrid {
  std::string layer;       // names the layer; printable, no '.', at most kMaxLayerNameBytes
  std::uint32_t dims = 0;  // d, 1..kMaxGridDims
  std::uint32_t side = 0;  // M, 1..kMaxGridSide

  // Throws std::invalid_argument naming what is wrong.
  void check() const;
  bool contains(const ExpertUid& uid) const;
  // M^d, saturating at 2^63.
  std::uint64_t capacity() const;
  // The uid with this index in row-major order (index < capacity()).
  ExpertUid uid_at(std::uint64_t index) const;
};

// "3.17": a uid or a prefix, for logs and JSON.
std::string uid_text(std::span<const std::uint32_t> uid);
// The DHT key of a prefix shorter than the grid's dims (the empty prefix is the layer's root).
std::string prefix_key(const ExpertGrid& grid, std::span<const std::uint32_t> prefix);
// The DHT key under which an expert's checkpoint is kept.
std::string checkpoint_key(const ExpertGrid& grid, const ExpertUid& uid);

// A coordinate as a DHT subkey (a varint), and back; nullopt when the bytes are not one.
std::vector<std::uint8_t> coordinate_subkey(std::uint32_t coordinate);
std::optional<std::uint32_t> parse_coordinate_subkey(std::span<const std::uint8_t> bytes);

// A leaf entry's subkey: the hosting runtime's peer id (a varint); nullopt if the bytes are not one.
std::vector<std::uint8_t> encode_runtime(std::uint32_t runtime);
std::optional<std::uint32_t> decode_runtime(std::span<const std::uint8_t> bytes);
// A leaf entry's value: distinct last coordinates in increasing order (varint count, then each).
// Decoding refuses anything else, or a coordinate of `side` or more (nullopt).
std::vector<std::uint8_t> encode_coordinates(std::span<const std::uint32_t> sorted_coordinates);
std::optional<std::vector<std::uint32_t>> decode_coordinates(std::span<const std::uint8_t> bytes, std::uint32_t side);

}  // namespace swarmlab::core::dmoe
