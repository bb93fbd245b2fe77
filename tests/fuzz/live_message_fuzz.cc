// libFuzzer target for the live transport's own decoders (tests/fuzz/run_fuzz.sh live): the
// connection handshake (exec/handshake.h) and address directory frames (exec/address_directory.h).
// Any bytes either decode into a value that survives an encode/decode round trip (a handshake
// encodes back to the very bytes), or throw core::DecodeError. Nothing else escapes.
//
// Built with -DLIVE_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/wire.h"
#include "exec/address_directory.h"
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
  return 0;
}
#else
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(std::span<const std::uint8_t>(data, size));
  return 0;
}
#endif
