#pragma once
// The frame SHA-1 and SHA-256 share (FIPS 180-4, sections 5.1.1 and 6): the message is taken in
// 64-byte blocks, padded with a 1 bit, zeros up to 56 mod 64 bytes and its bit length (64-bit big
// endian), and the digest is the state words, big endian. `Traits` gives the state's initial value
// and the compression of one block into it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

namespace swarmlab::core::dht {

// Word t of a block: 32 bits, big endian.
inline std::uint32_t block_word(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | static_cast<std::uint32_t>(p[3]);
}

template <class Traits>
class BlockHash {
 public:
  using State = std::remove_const_t<decltype(Traits::kInitial)>;
  using Digest = std::array<std::uint8_t, 4 * std::tuple_size_v<State>>;

  BlockHash() : h_(Traits::kInitial) {}

  void update(std::span<const std::uint8_t> data) {
    total_bytes_ += data.size();
    std::size_t i = 0;
    if (buffered_ > 0) {
      while (buffered_ < 64 && i < data.size()) buffer_[buffered_++] = data[i++];
      if (buffered_ < 64) return;
      Traits::compress(h_, buffer_.data());
      buffered_ = 0;
    }
    for (; i + 64 <= data.size(); i += 64) Traits::compress(h_, data.data() + i);
    while (i < data.size()) buffer_[buffered_++] = data[i++];
  }
  void update(std::string_view data) {
    update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
  }

  // Pads, finishes and returns the digest; the object must not be updated afterwards.
  Digest digest() {
    const std::uint64_t bit_length = total_bytes_ * 8;
    buffer_[buffered_++] = 0x80;
    if (buffered_ > 56) {
      while (buffered_ < 64) buffer_[buffered_++] = 0;
      Traits::compress(h_, buffer_.data());
      buffered_ = 0;
    }
    while (buffered_ < 56) buffer_[buffered_++] = 0;
    for (int i = 7; i >= 0; --i) buffer_[buffered_++] = static_cast<std::uint8_t>(bit_length >> (8 * i));
    Traits::compress(h_, buffer_.data());
    buffered_ = 0;
    Digest out;
    for (std::size_t i = 0; i < h_.size(); ++i)
      for (std::size_t b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * b));
    return out;
  }

 private:
  State h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// The digest of one whole message.
template <class Hash, class Data>
typename Hash::Digest digest_of(const Data& data) {
  Hash h;
  h.update(data);
  return h.digest();
}

}  // namespace swarmlab::core::dht
