#pragma once
// Incremental parser of the live wire format: every message is a frame of a 4-byte little-endian
// length (core::kFrameHeaderBytes) followed by that many bytes. The reader hands out the exact
// buffer the next bytes belong in, so a socket's bytes are received straight into the message
// vector (no staging copy), and it rejects a length above the limit before allocating anything.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/message.h"

namespace swarmlab::exec {

// Writes the frame header for a message of `length` bytes.
inline std::array<std::uint8_t, core::kFrameHeaderBytes> frame_header(std::uint32_t length) {
  return {static_cast<std::uint8_t>(length), static_cast<std::uint8_t>(length >> 8),
          static_cast<std::uint8_t>(length >> 16), static_cast<std::uint8_t>(length >> 24)};
}

// Appends one frame, header and body, to `stream`: the bytes a peer sends for one message.
inline void append_frame(std::vector<std::uint8_t>& stream, std::span<const std::uint8_t> body) {
  const auto header = frame_header(static_cast<std::uint32_t>(body.size()));
  stream.insert(stream.end(), header.begin(), header.end());
  stream.insert(stream.end(), body.begin(), body.end());
}

class FrameReader {
 public:
  enum class Status { NeedMore, FrameReady, TooLarge };

  explicit FrameReader(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}
  // Changes the limit for frames whose header has not been read yet (handshake vs data).
  void set_limit(std::uint64_t max_bytes) { max_bytes_ = max_bytes; }

  // Where the next received bytes go; never empty. Receiving fewer bytes than its size is fine.
  std::span<std::uint8_t> buffer();
  // Accounts for `n` bytes written at the start of buffer().
  Status commit(std::size_t n);
  // The completed frame's bytes (after FrameReady); the reader starts on the next header.
  std::vector<std::uint8_t> take();

  // True when no part of a frame has been received: a clean place for the stream to end.
  bool at_boundary() const { return !in_body_ && header_got_ == 0; }

 private:
  std::uint64_t max_bytes_;
  std::array<std::uint8_t, core::kFrameHeaderBytes> header_{};
  std::size_t header_got_ = 0;
  bool in_body_ = false;
  bool ready_ = false;
  std::vector<std::uint8_t> body_;
  std::size_t body_got_ = 0;
};

}  // namespace swarmlab::exec
