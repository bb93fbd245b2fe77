// libFuzzer target for the live transport's own decoders (tests/fuzz/run_fuzz.sh live): the
// connection handshake (exec/handshake.h) and address directory frames (exec/address_directory.h).
// Any bytes either decode into a value that survives an encode/decode round trip (a handshake
// encodes back to the very bytes), or throw core::DecodeError. Nothing else escapes.
// The same bytes are also a TCP stream cut into frames (exec/frame_reader.h): the first two bytes
// pick how many bytes each receive delivers and the frame size limit, the rest is the stream. Every
// frame handed out is the length its header said and within the limit, a header over the limit
// stops the stream before anything is allocated for it, and the frames written back with their
// headers are exactly the bytes consumed.
//
// Built with -DLIVE_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/wire.h"
#include "exec/address_directory.h"
#include "exec/frame_reader.h"
#include "exec/handshake.h"

namespace {

using namespace swarmlab;

void check(std::span<const std::uint8_t> bytes) {
  const std::vector<std::uint8_t> original(bytes.begin(), bytes.end());
  try {
    const exec::Handshake h = exec::decode_handshake(bytes);
    if (exec::encode_handshake(h) != original) std::abort();
  } catch (const core::DecodeError&) {
  }
  try {
    const std::vector<exec::DirectoryEntry> d = exec::decode_directory(bytes);
    // Counts may arrive in a longer varint than the encoder writes: compare the entries.
    if (exec::decode_directory(exec::encode_directory(d)) != d) std::abort();
  } catch (const core::DecodeError&) {
  }
}

void check_frames(std::span<const std::uint8_t> in) {
  if (in.size() < 2) return;
  const std::size_t step = 1 + in[0] % 16;  // bytes per receive, at most
  const std::uint64_t limit = 16u * (in[1] % 32);
  const std::span<const std::uint8_t> stream = in.subspan(2);
  exec::FrameReader reader(limit);
  std::vector<std::uint8_t> rebuilt;
  std::size_t at = 0, framed = 0;  // bytes received; bytes of the complete frames among them
  while (at < stream.size()) {
    const std::span<std::uint8_t> buffer = reader.buffer();
    if (buffer.empty()) std::abort();
    const std::size_t n = std::min({buffer.size(), step, stream.size() - at});
    std::copy_n(stream.begin() + static_cast<std::ptrdiff_t>(at), n, buffer.begin());
    at += n;
    const exec::FrameReader::Status status = reader.commit(n);
    if (status == exec::FrameReader::Status::TooLarge) {
      const std::uint64_t length = stream[at - 4] | stream[at - 3] << 8 | stream[at - 2] << 16 |
                                   static_cast<std::uint64_t>(stream[at - 1]) << 24;
      if (at - framed != core::kFrameHeaderBytes || length <= limit) std::abort();
      break;  // the transport drops the connection here
    }
    if (status != exec::FrameReader::Status::FrameReady) continue;
    const std::vector<std::uint8_t> frame = reader.take();
    if (frame.size() > limit || framed + core::kFrameHeaderBytes + frame.size() != at) std::abort();
    exec::append_frame(rebuilt, frame);
    framed = at;
  }
  if (!std::equal(rebuilt.begin(), rebuilt.end(), stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(framed)))
    std::abort();
  if (reader.at_boundary() != (at == framed)) std::abort();
}

}  // namespace

#ifdef LIVE_FUZZ_MAKE_CORPUS
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  int n = 0;
  auto write = [&](const std::vector<std::uint8_t>& bytes) {
    std::ofstream(dir + "/seed-" + std::to_string(n++), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  exec::Handshake hello{exec::HandshakeKind::Hello, 42, 3, 0, exec::SocketAddress{0x7F000001u, 9000}};
  write(exec::encode_handshake(hello));
  write(exec::encode_handshake({exec::HandshakeKind::Ack, 42, 0, 3}));
  const std::vector<exec::DirectoryEntry> entries = {{1, {0x7F000001u, 9001}}, {2, {0x0A4D0002u, 7000}}};
  write(exec::encode_directory(entries));
  // A stream of two frames and the start of a third, three bytes per receive, limit 64 bytes.
  std::vector<std::uint8_t> stream = {2, 4};
  exec::append_frame(stream, std::vector<std::uint8_t>{1, 2, 3});
  exec::append_frame(stream, {});
  stream.insert(stream.end(), {9, 0, 0, 0, 7});
  write(stream);
  return 0;
}
#else
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(std::span<const std::uint8_t>(data, size));
  check_frames(std::span<const std::uint8_t>(data, size));
  return 0;
}
#endif
