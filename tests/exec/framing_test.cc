// The wire framing and the handshake, without sockets.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "core/wire.h"
#include "exec/frame_reader.h"
#include "exec/address_directory.h"
#include "exec/handshake.h"

namespace swarmlab::exec {
namespace {

// Feeds `bytes` to the reader in chunks of at most `chunk`, collecting frames.
std::vector<std::vector<std::uint8_t>> feed(FrameReader& r, const std::vector<std::uint8_t>& bytes, std::size_t chunk,
                                            bool* too_large = nullptr) {
  std::vector<std::vector<std::uint8_t>> frames;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    auto buf = r.buffer();
    const std::size_t n = std::min({chunk, buf.size(), bytes.size() - pos});
    std::memcpy(buf.data(), bytes.data() + pos, n);
    pos += n;
    const auto st = r.commit(n);
    if (st == FrameReader::Status::TooLarge) {
      if (too_large) *too_large = true;
      return frames;
    }
    if (st == FrameReader::Status::FrameReady) frames.push_back(r.take());
  }
  return frames;
}

std::vector<std::uint8_t> framed(const std::vector<std::vector<std::uint8_t>>& messages) {
  std::vector<std::uint8_t> out;
  for (const auto& m : messages) append_frame(out, m);
  return out;
}

TEST(Framing, FramesSurviveAnyChunking) {
  const std::vector<std::vector<std::uint8_t>> messages = {{}, {1}, std::vector<std::uint8_t>(1000, 7), {9, 8, 7}};
  for (std::size_t chunk : {1u, 3u, 4u, 5u, 4096u}) {
    FrameReader r(1 << 20);
    EXPECT_EQ(feed(r, framed(messages), chunk), messages) << "chunk " << chunk;
    EXPECT_TRUE(r.at_boundary());
  }
}

TEST(Framing, LengthAboveTheLimitIsRejectedBeforeAllocating) {
  FrameReader r(1000);
  bool too_large = false;
  feed(r, {0xFF, 0xFF, 0xFF, 0xFF}, 4, &too_large);  // a 4 GiB prefix
  EXPECT_TRUE(too_large);
  FrameReader exact(1000);
  EXPECT_EQ(feed(exact, framed({std::vector<std::uint8_t>(1000, 1)}), 512).size(), 1u);
  FrameReader over(1000);
  too_large = false;
  feed(over, framed({std::vector<std::uint8_t>(1001, 1)}), 512, &too_large);
  EXPECT_TRUE(too_large);
}

TEST(Framing, HeaderIsLittleEndianLength) {
  const auto h = frame_header(0x01020304);
  EXPECT_EQ(h[0], 4);
  EXPECT_EQ(h[3], 1);
  EXPECT_EQ(h.size(), core::kFrameHeaderBytes);
}

TEST(Handshake, RoundTrips) {
  Handshake h{HandshakeKind::Hello, 0x1234567890ull, 7, 3};
  const Handshake d = decode_handshake(encode_handshake(h));
  EXPECT_EQ(d.kind, h.kind);
  EXPECT_EQ(d.network, h.network);
  EXPECT_EQ(d.from, 7u);
  EXPECT_EQ(d.to, 3u);
  EXPECT_LE(encode_handshake(h).size(), kMaxHandshakeBytes);
  EXPECT_FALSE(d.listen.has_value());
  h.listen = SocketAddress{0x0A4D0002u, 7000};
  const Handshake with = decode_handshake(encode_handshake(h));
  EXPECT_EQ(with.listen, h.listen);
  EXPECT_LE(encode_handshake(h).size(), kMaxHandshakeBytes);
}

TEST(AddressDirectory, RoundTripsAndRejectsMalformed) {
  const std::vector<DirectoryEntry> entries = {{3, {0x7F000001u, 9001}}, {70000, {0x0A4D0005u, 7000}}};
  const std::vector<std::uint8_t> frame = encode_directory(entries);
  EXPECT_EQ(frame[0], kDirectoryFrame);
  EXPECT_EQ(decode_directory(frame), entries);
  for (std::size_t n = 0; n < frame.size(); ++n)
    EXPECT_THROW(decode_directory(std::span(frame).first(n)), core::DecodeError) << "truncated to " << n;
  std::vector<std::uint8_t> trailing = frame;
  trailing.push_back(0);
  EXPECT_THROW(decode_directory(trailing), core::DecodeError);
  std::vector<std::uint8_t> port0 = encode_directory(std::vector<DirectoryEntry>{{1, {1, 0}}});
  EXPECT_THROW(decode_directory(port0), core::DecodeError);
  std::vector<std::uint8_t> huge = {kDirectoryFrame, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};  // 2^32 - 1 entries
  EXPECT_THROW(decode_directory(huge), core::DecodeError);
}

TEST(Handshake, GarbageIsRejected) {
  std::mt19937 gen(7);
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::uint8_t> bytes(gen() % 40);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(gen());
    EXPECT_THROW(decode_handshake(bytes), core::DecodeError);
  }
  auto good = encode_handshake({HandshakeKind::Ack, 1, 2, 3});
  good.push_back(0);  // trailing byte
  EXPECT_THROW(decode_handshake(good), core::DecodeError);
  good.pop_back();
  good[6] = 9;  // unknown kind
  EXPECT_THROW(decode_handshake(good), core::DecodeError);
}

}  // namespace
}  // namespace swarmlab::exec
