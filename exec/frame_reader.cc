#include "exec/frame_reader.h"

#include <stdexcept>

namespace swarmlab::exec {

std::span<std::uint8_t> FrameReader::buffer() {
  if (ready_) throw std::logic_error("FrameReader: take() the ready frame first");
  if (!in_body_) return std::span<std::uint8_t>(header_).subspan(header_got_);
  return std::span<std::uint8_t>(body_).subspan(body_got_);
}

FrameReader::Status FrameReader::commit(std::size_t n) {
  if (!in_body_) {
    header_got_ += n;
    if (header_got_ < header_.size()) return Status::NeedMore;
    const std::uint64_t length = static_cast<std::uint64_t>(header_[0]) | static_cast<std::uint64_t>(header_[1]) << 8 |
                                 static_cast<std::uint64_t>(header_[2]) << 16 | static_cast<std::uint64_t>(header_[3]) << 24;
    if (length > max_bytes_) return Status::TooLarge;
    header_got_ = 0;
    body_.assign(length, 0);  // sized from a validated length only
    body_got_ = 0;
    in_body_ = true;
    if (length == 0) {
      ready_ = true;
      return Status::FrameReady;
    }
    return Status::NeedMore;
  }
  body_got_ += n;
  if (body_got_ < body_.size()) return Status::NeedMore;
  ready_ = true;
  return Status::FrameReady;
}

std::vector<std::uint8_t> FrameReader::take() {
  if (!ready_) throw std::logic_error("FrameReader: no frame is ready");
  ready_ = false;
  in_body_ = false;
  body_got_ = 0;
  return std::move(body_);
}

}  // namespace swarmlab::exec
