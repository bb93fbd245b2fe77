#pragma once
// The DHT's wire messages. Every message is
//
//   u8  service          core::ServiceId::Dht
//   u8  kind             MessageKind
//   u8  flags            bit 0: the sender is in client mode (do not route to it);
//                        bit 1: ids are 256 bits (Hydra, docs/hydra.md §1), else 160; others zero
//   varint request_id    chosen by the requester, echoed in the response
//   20  sender id        the sender's NodeId, big-endian (32 bytes with 256-bit ids, and so
//                        for every id below)
//   f64 sender_time      the sender's clock, for the skew check
//
// followed by a body that depends on the kind:
//
//   PingRequest, PingResponse    (empty)
//   FindNodeRequest              20 target
//   FindNodeResponse             contacts
//   FindValueRequest             20 key
//   FindValueResponse            record, contacts
//   StoreRequest                 20 key, u8 has_subkey, [bytes subkey], bytes value, f64 expiration
//   StoreResponse                u8 stored
//
//   contacts = varint n, n × (20 id, varint peer)
//   record   = u8 0 (none) | u8 1, bytes value, f64 expiration
//            | u8 2, varint n ≥ 1, n × (bytes subkey, bytes value, f64 expiration), subkeys ascending
//   bytes    = varint length, raw bytes
//
// decode() accepts exactly this and nothing else: unknown kinds or flags, booleans other than 0/1,
// non-finite times, oversized fields, unsorted subkeys, truncation and trailing bytes all throw
// DecodeError, and so do ids of another width than the receiver's.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/dht/config.h"
#include "core/dht/contact.h"
#include "core/dht/record.h"
#include "core/wire.h"

namespace swarmlab::core::dht {

enum class MessageKind : std::uint8_t {
  PingRequest = 1,
  PingResponse = 2,
  FindNodeRequest = 3,
  FindNodeResponse = 4,
  FindValueRequest = 5,
  FindValueResponse = 6,
  StoreRequest = 7,
  StoreResponse = 8,
};

inline bool is_request(MessageKind kind) { return static_cast<std::uint8_t>(kind) % 2 == 1; }
inline MessageKind response_to(MessageKind request) {
  return static_cast<MessageKind>(static_cast<std::uint8_t>(request) + 1);
}

// What a receiver accepts; taken from its DhtConfig.
struct WireLimits {
  std::size_t max_message_bytes = 1u << 20;
  std::size_t max_value_bytes = 64u << 10;
  std::size_t max_subkey_bytes = 1024;
  std::size_t max_contacts = 256;
  int id_bits = kKademliaIdBits;  // the only width accepted
  static WireLimits from(const DhtConfig& c) {
    return {c.max_message_bytes, c.max_value_bytes, c.max_subkey_bytes, c.max_contacts_per_message, c.id_bits};
  }
};

// One decoded message. Fields a kind does not use keep their defaults (and encode() ignores them).
struct DhtMessage {
  MessageKind kind = MessageKind::PingRequest;
  bool sender_is_client = false;
  int id_bits = kKademliaIdBits;  // the width of every id in the message (160 or 256)
  std::uint64_t request_id = 0;
  NodeId sender;
  Seconds sender_time = 0;
  NodeId target;                  // FindNode/FindValue/Store requests
  std::vector<Contact> contacts;  // FindNode/FindValue responses
  std::optional<Record> record;   // FindValue response, when the responder holds the key
  std::optional<Bytes> subkey;    // Store request into a dictionary
  TimedValue value;               // Store request
  bool stored = false;            // Store response
  friend bool operator==(const DhtMessage&, const DhtMessage&) = default;
};

// Appends the encoding of `m` to `out`.
void encode(const DhtMessage& m, std::vector<std::uint8_t>& out);
// The same with `record`, when not null, in place of m.record (a FindValue response straight from
// storage, without copying the record into the message).
void encode(const DhtMessage& m, std::vector<std::uint8_t>& out, const Record* record);
std::vector<std::uint8_t> encode(const DhtMessage& m);
// What decode() builds of a response's record and contacts. CheckOnly checks them exactly as
// Keep does (a malformed one still throws) but leaves them empty: a reply that arrives after its
// lookup finished is read only for its sender, and a read that has its answers gets up to α - 1
// more, each carrying the whole record.
enum class ReplyBody { Keep, CheckOnly };

// Throws DecodeError on anything but a well-formed DHT message within `limits`.
DhtMessage decode(std::span<const std::uint8_t> bytes, const WireLimits& limits, ReplyBody body = ReplyBody::Keep);
// The request id in the header of what looks like a response (nullopt otherwise), read without
// decoding the rest; decode() still decides whether it is well formed.
std::optional<std::uint64_t> response_request_id(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::dht
