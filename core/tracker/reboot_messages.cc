#include "core/tracker/reboot_messages.h"

#include <set>

#include "core/service_ids.h"

namespace swarmlab::core::tracker {
namespace {

void put_header(Writer& w, RebootKind kind, std::uint64_t request_id) {
  w.u8(static_cast<std::uint8_t>(ServiceId::Tracker));
  w.u8(static_cast<std::uint8_t>(kind));
  w.varint(request_id);
}

void put_peers(Writer& w, const std::vector<PeerId>& peers) {
  w.varint(peers.size());
  for (PeerId p : peers) w.varint(p);
}

std::vector<PeerId> get_peers(Reader& r, std::size_t max, const char* what) {
  const std::size_t n = r.count(1);
  if (n > max) throw DecodeError(std::to_string(n) + " " + what + " exceed the limit");
  std::vector<PeerId> out(n);
  for (PeerId& p : out) p = r.peer();
  return out;
}

// Reads the service byte and the kind, which must be `kind`; returns the request id.
std::uint64_t get_header(Reader& r, RebootKind kind) {
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Tracker)) throw DecodeError("not a tracker message");
  if (r.u8() != static_cast<std::uint8_t>(kind)) throw DecodeError("unexpected tracker message kind");
  return r.varint();
}

std::uint64_t get_generation(Reader& r) {
  const std::uint64_t g = r.varint();
  if (g == 0) throw DecodeError("a reboot's generation is at least 1");
  return g;
}

}  // namespace

std::vector<std::uint8_t> encode(const RebootRequest& m) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  put_header(w, RebootKind::Request, m.request_id);
  w.str(m.title);
  w.varint(m.generation);
  put_peers(w, m.members);
  put_peers(w, m.candidates);
  w.bytes(m.state);
  return out;
}

std::vector<std::uint8_t> encode(const RebootReply& m) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  put_header(w, RebootKind::Reply, m.request_id);
  w.varint(m.generation);
  w.u8(static_cast<std::uint8_t>(m.status));
  return out;
}

RebootKind peek_reboot_kind(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 2 || bytes[0] != static_cast<std::uint8_t>(ServiceId::Tracker))
    throw DecodeError("not a tracker message");
  if (bytes[1] != static_cast<std::uint8_t>(RebootKind::Request) && bytes[1] != static_cast<std::uint8_t>(RebootKind::Reply))
    throw DecodeError("unknown tracker message kind");
  return static_cast<RebootKind>(bytes[1]);
}

RebootRequest decode_reboot_request(std::span<const std::uint8_t> bytes, const RebootLimits& limits) {
  Reader r(bytes);
  RebootRequest m;
  m.request_id = get_header(r, RebootKind::Request);
  m.title = r.str(limits.max_title_bytes);
  if (m.title.empty()) throw DecodeError("empty dataset title");
  m.generation = get_generation(r);
  m.members = get_peers(r, limits.max_members, "members");
  if (m.members.empty()) throw DecodeError("a rebooted group needs a founding member");
  for (std::size_t i = 1; i < m.members.size(); ++i)
    if (m.members[i] <= m.members[i - 1]) throw DecodeError("members not strictly ascending");
  m.candidates = get_peers(r, limits.max_candidates, "candidates");
  const std::set<PeerId> candidates(m.candidates.begin(), m.candidates.end());
  if (candidates.size() != m.candidates.size()) throw DecodeError("repeated candidate");
  for (PeerId p : m.members)
    if (!candidates.count(p)) throw DecodeError("a founding member that is not a candidate");
  const auto state = r.bytes(limits.max_state_bytes);
  m.state.assign(state.begin(), state.end());
  r.finish();
  return m;
}

RebootReply decode_reboot_reply(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  RebootReply m;
  m.request_id = get_header(r, RebootKind::Reply);
  m.generation = get_generation(r);
  const std::uint8_t status = r.u8();
  if (status < 1 || status > 4) throw DecodeError("unknown reboot status");
  m.status = static_cast<RebootStatus>(status);
  r.finish();
  return m;
}

}  // namespace swarmlab::core::tracker
