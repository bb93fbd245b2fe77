#pragma once
// What a member attaches to its join request (e.g. its capacity, announcement_codec.h): immutable
// bytes that every copy of a group shares. Each member of a group receives its own copy of the
// group, so copying the bytes would cost n² allocations a round.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace swarmlab::core::matchmaking {

class Attachment {
 public:
  Attachment() = default;
  Attachment(std::vector<std::uint8_t> bytes)  // NOLINT(google-explicit-constructor): a value of bytes
      : bytes_(bytes.empty() ? nullptr : std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes))) {}
  Attachment(std::initializer_list<std::uint8_t> bytes) : Attachment(std::vector<std::uint8_t>(bytes)) {}
  Attachment(std::span<const std::uint8_t> bytes)
      : bytes_(bytes.empty() ? nullptr : std::make_shared<const std::vector<std::uint8_t>>(bytes.begin(), bytes.end())) {}

  std::span<const std::uint8_t> bytes() const {
    return bytes_ ? std::span<const std::uint8_t>(*bytes_) : std::span<const std::uint8_t>();
  }
  operator std::span<const std::uint8_t>() const { return bytes(); }  // NOLINT: read where bytes are read

  friend bool operator==(const Attachment& a, const Attachment& b) {
    return a.bytes_ == b.bytes_ || std::ranges::equal(a.bytes(), b.bytes());
  }

 private:
  std::shared_ptr<const std::vector<std::uint8_t>> bytes_;
};

}  // namespace swarmlab::core::matchmaking
