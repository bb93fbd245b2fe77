#pragma once
// Compact little-endian binary encoding for protocol messages. Reader checks every bound and
// throws DecodeError on malformed input, so a hostile or truncated message can never read out of
// range; protocol handlers catch DecodeError and drop the message.
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace swarmlab::core {

// Byte-wise lexicographic order of byte strings (map keys). Spelled out because GCC 12 warns falsely
// (-Wstringop-overread) on std::less<std::vector<std::uint8_t>>.
struct BytesLess {
  bool operator()(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) const {
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    // memcmp: keys of the roles cache and of round replay are kilobytes long and share most of it.
    const int c = n > 0 ? std::memcmp(a.data(), b.data(), n) : 0;
    return c != 0 ? c < 0 : a.size() < b.size();
  }
};

class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}

  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { fixed(v); }
  void u32(std::uint32_t v) { fixed(v); }
  void u64(std::uint64_t v) { fixed(v); }
  void f32(float v) { fixed(v); }
  void f64(double v) { fixed(v); }
  // LEB128 unsigned varint.
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void raw(std::span<const std::uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  // Length-prefixed byte string.
  void bytes(std::span<const std::uint8_t> b) {
    varint(b.size());
    raw(b);
  }
  void str(std::string_view s) {
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  template <typename T>
  void fixed(T v) {
    // Grown and copied into rather than inserted: vector::insert of a few bytes takes its general
    // path, a tenth of an oracle training run building roles-cache keys.
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));  // the supported targets are little-endian (static_assert in wire.cc)
  }
  std::vector<std::uint8_t>& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}

  std::uint8_t u8() { return fixed<std::uint8_t>(); }
  std::uint16_t u16() { return fixed<std::uint16_t>(); }
  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  float f32() { return fixed<float>(); }
  double f64() { return fixed<double>(); }
  // Only the shortest encoding of each value (what Writer::varint writes), so that every value has
  // one encoding: bytes that decode and encode again are the bytes received (signatures cover them).
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8();
      if (shift == 63 && b > 1) throw DecodeError("varint exceeds 64 bits");
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        if (b == 0 && shift > 0) throw DecodeError("varint not in its shortest form");
        return v;
      }
    }
    throw DecodeError("varint longer than 10 bytes");
  }
  std::span<const std::uint8_t> raw(std::size_t n) {
    need(n);
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  // Length-prefixed byte string, at most `max` bytes.
  std::span<const std::uint8_t> bytes(std::size_t max) {
    const std::uint64_t n = varint();
    if (n > max) throw DecodeError("byte string of " + std::to_string(n) + " bytes exceeds " + std::to_string(max));
    return raw(static_cast<std::size_t>(n));
  }
  std::string str(std::size_t max) {
    auto b = bytes(max);
    return std::string(b.begin(), b.end());
  }
  // A peer id as a varint: at most 2^32 - 1 (core::PeerId).
  std::uint32_t peer() {
    const std::uint64_t v = varint();
    if (v > 0xFFFFFFFFu) throw DecodeError("peer id out of range");
    return static_cast<std::uint32_t>(v);
  }
  // A boolean byte: 0 or 1, nothing else.
  bool boolean() {
    const std::uint8_t b = u8();
    if (b > 1) throw DecodeError("boolean byte " + std::to_string(b));
    return b == 1;
  }
  // A count of items that each take at least `min_item_bytes`; rejects counts the remaining input
  // cannot hold, so a hostile count cannot trigger a huge allocation.
  std::size_t count(std::size_t min_item_bytes) {
    const std::uint64_t n = varint();
    if (min_item_bytes > 0 && n > remaining() / min_item_bytes)
      throw DecodeError("item count " + std::to_string(n) + " exceeds the remaining input");
    return static_cast<std::size_t>(n);
  }

  std::size_t remaining() const { return in_.size() - pos_; }
  // Throws unless every byte was consumed: trailing garbage is malformed.
  void finish() const {
    if (remaining() != 0) throw DecodeError(std::to_string(remaining()) + " trailing bytes");
  }

 private:
  void need(std::size_t n) const {
    if (n > remaining())
      throw DecodeError("truncated: need " + std::to_string(n) + " bytes, have " + std::to_string(remaining()));
  }
  template <typename T>
  T fixed() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

}  // namespace swarmlab::core
