#include "core/progress/peer_progress.h"

#include <cmath>
#include <limits>

#include "core/wire.h"

namespace swarmlab::core::progress {
namespace {

constexpr std::uint8_t kVersion = 2;

double finite_nonnegative(Reader& r, const char* what) {
  const double v = r.f64();
  if (!std::isfinite(v) || v < 0) throw DecodeError(std::string("progress: bad ") + what);
  return v;
}

}  // namespace

std::vector<std::uint8_t> encode_progress(const PeerProgress& p) {
  std::vector<std::uint8_t> out;
  out.reserve(64);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
  Writer w(out);
  w.u8(kVersion);
  w.varint(p.peer);
  w.varint(p.step);
  w.u64(p.lineage);
  w.varint(p.samples);
  w.f64(p.samples_per_s);
  w.f64(p.time);
  w.u8(p.client_mode ? 1 : 0);
  return out;
}

PeerProgress decode_progress(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.u8() != kVersion) throw DecodeError("progress: unknown version");
  PeerProgress p;
  const std::uint64_t peer = r.varint();
  if (peer > std::numeric_limits<PeerId>::max()) throw DecodeError("progress: peer id out of range");
  p.peer = static_cast<PeerId>(peer);
  p.step = r.varint();
  p.lineage = r.u64();
  p.samples = r.varint();
  p.samples_per_s = finite_nonnegative(r, "samples/s");
  p.time = finite_nonnegative(r, "time");
  const std::uint8_t client = r.u8();
  if (client > 1) throw DecodeError("progress: bad client flag");
  p.client_mode = client == 1;
  r.finish();
  return p;
}

std::vector<std::uint8_t> peer_subkey(PeerId peer) {
  return {static_cast<std::uint8_t>(peer), static_cast<std::uint8_t>(peer >> 8), static_cast<std::uint8_t>(peer >> 16),
          static_cast<std::uint8_t>(peer >> 24)};  // little-endian, as Writer::u32
}

}  // namespace swarmlab::core::progress
