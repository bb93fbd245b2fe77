#include "core/dht/messages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/service_ids.h"

namespace swarmlab::core::dht {
namespace {

constexpr std::uint8_t kFlagClient = 1, kFlagWideIds = 2;
constexpr std::uint8_t kRecordNone = 0, kRecordPlain = 1, kRecordDictionary = 2;
// Smallest encodings, used to bound counts against the remaining input.
constexpr std::size_t kMinEntryBytes = 1 + 1 + 8;

std::size_t id_bytes(int bits) { return static_cast<std::size_t>(bits) / 8; }

void put_id(Writer& w, const NodeId& id, int bits) {
  const IdBytes bytes = id.to_bytes(bits);
  w.raw(bytes.view());
}

NodeId get_id(Reader& r, int bits) { return NodeId::from_bytes(r.raw(id_bytes(bits))); }

bool get_bool(Reader& r) {
  const std::uint8_t b = r.u8();
  if (b > 1) throw DecodeError("boolean byte " + std::to_string(b));
  return b == 1;
}

double get_time(Reader& r) {
  const double t = r.f64();
  if (!std::isfinite(t)) throw DecodeError("non-finite time");
  return t;
}

void put_contacts(Writer& w, const std::vector<Contact>& contacts, int bits) {
  w.varint(contacts.size());
  for (const Contact& c : contacts) {
    put_id(w, c.id, bits);
    w.varint(c.peer);
  }
}

// `keep` false: checked as carefully, but nothing is built (a reply nobody reads any more).
std::vector<Contact> get_contacts(Reader& r, const WireLimits& limits, bool keep) {
  const std::size_t n = r.count(id_bytes(limits.id_bits) + 1);
  if (n > limits.max_contacts) throw DecodeError(std::to_string(n) + " contacts exceed the limit");
  std::vector<Contact> out(keep ? n : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const NodeId id = get_id(r, limits.id_bits);
    const std::uint64_t peer = r.varint();
    if (peer > std::numeric_limits<PeerId>::max()) throw DecodeError("peer id out of range");
    if (keep) out[i] = Contact{id, static_cast<PeerId>(peer)};
  }
  return out;
}

void put_record(Writer& w, const Record* record) {
  if (!record) {
    w.u8(kRecordNone);
  } else if (!record->is_dictionary()) {
    w.u8(kRecordPlain);
    w.bytes(record->value().value);
    w.f64(record->value().expiration);
  } else {
    w.u8(kRecordDictionary);
    w.varint(record->dictionary().size());
    for (const auto& [subkey, v] : record->dictionary()) {
      w.bytes(subkey);
      w.bytes(v.value);
      w.f64(v.expiration);
    }
  }
}

Bytes to_bytes(std::span<const std::uint8_t> s) { return Bytes(s.begin(), s.end()); }

// `keep` false: checked as carefully, but nothing is built (nullopt).
std::optional<Record> get_record(Reader& r, const WireLimits& limits, bool keep) {
  switch (r.u8()) {
    case kRecordNone:
      return std::nullopt;
    case kRecordPlain: {
      const auto value = r.bytes(limits.max_value_bytes);
      const Seconds expiration = get_time(r);
      if (!keep) return std::nullopt;
      return Record(TimedValue{to_bytes(value), expiration});
    }
    case kRecordDictionary: {
      const std::size_t n = r.count(kMinEntryBytes);
      if (n == 0) throw DecodeError("empty dictionary");
      Dictionary d;
      std::span<const std::uint8_t> previous;
      for (std::size_t i = 0; i < n; ++i) {
        const auto subkey = r.bytes(limits.max_subkey_bytes);
        const auto value = r.bytes(limits.max_value_bytes);
        const Seconds expiration = get_time(r);
        // Ascending as BytesLess orders them: bytewise, then the shorter first.
        if (i > 0 && !std::lexicographical_compare(previous.begin(), previous.end(), subkey.begin(), subkey.end()))
          throw DecodeError("dictionary subkeys not ascending");
        previous = subkey;
        if (keep) d.emplace_hint(d.end(), to_bytes(subkey), TimedValue{to_bytes(value), expiration});
      }
      if (!keep) return std::nullopt;
      return Record(std::move(d));
    }
    default:
      throw DecodeError("unknown record tag");
  }
}

// An upper bound on the encoded size, so encoding allocates once.
std::size_t size_bound(const DhtMessage& m, const Record* record) {
  std::size_t n = 64 + m.contacts.size() * (id_bytes(m.id_bits) + 5) + m.value.value.size();
  if (m.subkey) n += 10 + m.subkey->size();
  if (record) {
    if (!record->is_dictionary()) {
      n += 20 + record->value().value.size();
    } else {
      for (const auto& [subkey, v] : record->dictionary()) n += 28 + subkey.size() + v.value.size();
    }
  }
  return n;
}

}  // namespace

void encode(const DhtMessage& m, std::vector<std::uint8_t>& out) { encode(m, out, nullptr); }

void encode(const DhtMessage& m, std::vector<std::uint8_t>& out, const Record* record) {
  if (!record && m.record) record = &*m.record;
  out.reserve(out.size() + size_bound(m, record));
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(ServiceId::Dht));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.u8(static_cast<std::uint8_t>((m.sender_is_client ? kFlagClient : 0) | (m.id_bits == kHydraIdBits ? kFlagWideIds : 0)));
  w.varint(m.request_id);
  put_id(w, m.sender, m.id_bits);
  w.f64(m.sender_time);
  switch (m.kind) {
    case MessageKind::PingRequest:
    case MessageKind::PingResponse:
      break;
    case MessageKind::FindNodeRequest:
    case MessageKind::FindValueRequest:
      put_id(w, m.target, m.id_bits);
      break;
    case MessageKind::FindNodeResponse:
      put_contacts(w, m.contacts, m.id_bits);
      break;
    case MessageKind::FindValueResponse:
      put_record(w, record);
      put_contacts(w, m.contacts, m.id_bits);
      break;
    case MessageKind::StoreRequest:
      put_id(w, m.target, m.id_bits);
      w.u8(m.subkey ? 1 : 0);
      if (m.subkey) w.bytes(*m.subkey);
      w.bytes(m.value.value);
      w.f64(m.value.expiration);
      break;
    case MessageKind::StoreResponse:
      w.u8(m.stored ? 1 : 0);
      break;
  }
}

std::vector<std::uint8_t> encode(const DhtMessage& m) {
  std::vector<std::uint8_t> out;
  encode(m, out);
  return out;
}

DhtMessage decode(std::span<const std::uint8_t> bytes, const WireLimits& limits, ReplyBody body) {
  const bool keep = body == ReplyBody::Keep;
  if (bytes.size() > limits.max_message_bytes)
    throw DecodeError("message of " + std::to_string(bytes.size()) + " bytes exceeds the limit");
  Reader r(bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Dht)) throw DecodeError("not a DHT message");
  DhtMessage m;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 8) throw DecodeError("unknown DHT message kind " + std::to_string(kind));
  m.kind = static_cast<MessageKind>(kind);
  const std::uint8_t flags = r.u8();
  if (flags & ~(kFlagClient | kFlagWideIds)) throw DecodeError("unknown flags");
  m.sender_is_client = flags & kFlagClient;
  m.id_bits = flags & kFlagWideIds ? kHydraIdBits : kKademliaIdBits;
  // A node runs one id width; a message of the other cannot name anything in its keyspace.
  if (m.id_bits != limits.id_bits)
    throw DecodeError("ids of " + std::to_string(m.id_bits) + " bits where this DHT uses " + std::to_string(limits.id_bits));
  m.request_id = r.varint();
  m.sender = get_id(r, m.id_bits);
  m.sender_time = get_time(r);
  switch (m.kind) {
    case MessageKind::PingRequest:
    case MessageKind::PingResponse:
      break;
    case MessageKind::FindNodeRequest:
    case MessageKind::FindValueRequest:
      m.target = get_id(r, m.id_bits);
      break;
    case MessageKind::FindNodeResponse:
      m.contacts = get_contacts(r, limits, keep);
      break;
    case MessageKind::FindValueResponse:
      m.record = get_record(r, limits, keep);
      m.contacts = get_contacts(r, limits, keep);
      break;
    case MessageKind::StoreRequest:
      m.target = get_id(r, m.id_bits);
      if (get_bool(r)) m.subkey = to_bytes(r.bytes(limits.max_subkey_bytes));
      m.value.value = to_bytes(r.bytes(limits.max_value_bytes));
      m.value.expiration = get_time(r);
      break;
    case MessageKind::StoreResponse:
      m.stored = get_bool(r);
      break;
  }
  r.finish();
  return m;
}

std::optional<std::uint64_t> response_request_id(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 4 || bytes[0] != static_cast<std::uint8_t>(ServiceId::Dht)) return std::nullopt;
  if (bytes[1] < 1 || bytes[1] > 8 || is_request(static_cast<MessageKind>(bytes[1]))) return std::nullopt;
  try {
    Reader r(bytes.subspan(3));
    return r.varint();
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace swarmlab::core::dht
