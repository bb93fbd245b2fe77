#include "core/matchmaking/announcement_codec.h"

#include <cmath>
#include <cstring>

#include "core/wire.h"

namespace swarmlab::core::matchmaking {
namespace {

constexpr std::uint8_t kAnnouncementVersion = 2;

bool valid_rate(double v) { return std::isfinite(v) && v >= 0; }

double rate(Reader& r) {
  const double v = r.f64();
  if (!valid_rate(v)) throw DecodeError("announcement: bad rate");
  return v;
}

bool flag(Reader& r, const char* what) {
  const std::uint8_t v = r.u8();
  if (v > 1) throw DecodeError(what);
  return v == 1;
}

}  // namespace

std::vector<std::uint8_t> encode_announcement(const Announcement& a) {
  std::vector<std::uint8_t> out;
  out.reserve(64);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
  Writer w(out);
  w.u8(kAnnouncementVersion);
  w.f64(a.capacity.compute_sps);
  w.f64(a.capacity.download_bps);
  w.f64(a.capacity.upload_bps);
  w.u8(a.capacity.client_mode ? 1 : 0);
  w.u8(a.state_step ? 1 : 0);
  if (a.state_step) w.u64(*a.state_step);
  return out;
}

Announcement decode_announcement(std::span<const std::uint8_t> bytes) {
  // Every member decodes every member's announcement at every round: a well-formed record is read
  // directly; anything else goes through the checked reader below, which says what is wrong.
  constexpr std::size_t kHead = 1 + 3 * 8 + 2;
  if ((bytes.size() == kHead || bytes.size() == kHead + 8) && bytes[0] == kAnnouncementVersion &&
      bytes[kHead - 2] <= 1 && bytes[kHead - 1] == (bytes.size() == kHead ? 0 : 1)) {
    double v[3];
    std::memcpy(v, bytes.data() + 1, sizeof v);  // little-endian, as Reader reads it
    if (valid_rate(v[0]) && valid_rate(v[1]) && valid_rate(v[2])) {
      Announcement a{{v[0], v[1], v[2], bytes[kHead - 2] == 1}, std::nullopt};
      if (bytes.size() > kHead) {
        std::uint64_t step;
        std::memcpy(&step, bytes.data() + kHead, sizeof step);
        a.state_step = step;
      }
      return a;
    }
  }
  Reader r(bytes);
  if (r.u8() != kAnnouncementVersion) throw DecodeError("announcement: unknown version");
  Announcement a;
  a.capacity.compute_sps = rate(r);
  a.capacity.download_bps = rate(r);
  a.capacity.upload_bps = rate(r);
  a.capacity.client_mode = flag(r, "announcement: bad client flag");
  if (flag(r, "announcement: bad state flag")) a.state_step = r.u64();
  r.finish();
  return a;
}

}  // namespace swarmlab::core::matchmaking
