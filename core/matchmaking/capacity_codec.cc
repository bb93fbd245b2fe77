#include "core/matchmaking/capacity_codec.h"

#include <cmath>
#include <cstring>

#include "core/wire.h"

namespace swarmlab::core::matchmaking {
namespace {

constexpr std::uint8_t kCapacityVersion = 1;

bool valid_rate(double v) { return std::isfinite(v) && v >= 0; }

double rate(Reader& r) {
  const double v = r.f64();
  if (!valid_rate(v)) throw DecodeError("capacity: bad rate");
  return v;
}

}  // namespace

std::vector<std::uint8_t> encode_capacity(const planner::PeerCapacity& c) {
  std::vector<std::uint8_t> out;
  out.reserve(64);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
  Writer w(out);
  w.u8(kCapacityVersion);
  w.f64(c.compute_sps);
  w.f64(c.download_bps);
  w.f64(c.upload_bps);
  w.u8(c.client_mode ? 1 : 0);
  return out;
}

planner::PeerCapacity decode_capacity(std::span<const std::uint8_t> bytes) {
  // Every member decodes every member's capacity at every round: a well-formed record is read
  // directly; anything else goes through the checked reader below, which says what is wrong.
  constexpr std::size_t kSize = 1 + 3 * 8 + 1;
  if (bytes.size() == kSize && bytes[0] == kCapacityVersion && bytes[kSize - 1] <= 1) {
    double v[3];
    std::memcpy(v, bytes.data() + 1, sizeof v);  // little-endian, as Reader reads it
    if (valid_rate(v[0]) && valid_rate(v[1]) && valid_rate(v[2])) return {v[0], v[1], v[2], bytes[kSize - 1] == 1};
  }
  Reader r(bytes);
  if (r.u8() != kCapacityVersion) throw DecodeError("capacity: unknown version");
  planner::PeerCapacity c;
  c.compute_sps = rate(r);
  c.download_bps = rate(r);
  c.upload_bps = rate(r);
  const std::uint8_t client = r.u8();
  if (client > 1) throw DecodeError("capacity: bad client flag");
  c.client_mode = client == 1;
  r.finish();
  return c;
}

}  // namespace swarmlab::core::matchmaking
