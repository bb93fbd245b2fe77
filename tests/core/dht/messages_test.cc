#include "core/dht/messages.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <limits>

#include "core/service_ids.h"

namespace swarmlab::core::dht {
namespace {

Bytes b(std::string_view s) { return Bytes(s.begin(), s.end()); }

DhtMessage base(MessageKind kind, int bits = kKademliaIdBits) {
  Rng rng(1);
  DhtMessage m;
  m.kind = kind;
  m.id_bits = bits;
  m.request_id = 300;  // a two-byte varint
  m.sender = NodeId::random(rng, bits);
  m.sender_time = 12.5;
  return m;
}

std::vector<DhtMessage> samples() {
  Rng rng(2);
  std::vector<DhtMessage> out;
  out.push_back(base(MessageKind::PingRequest));
  DhtMessage pong = base(MessageKind::PingResponse);
  pong.sender_is_client = true;
  out.push_back(pong);
  DhtMessage find = base(MessageKind::FindNodeRequest);
  find.target = NodeId::random(rng);
  out.push_back(find);
  DhtMessage found = base(MessageKind::FindNodeResponse);
  for (PeerId p = 0; p < 20; ++p) found.contacts.push_back({NodeId::random(rng), p * 1000});
  out.push_back(found);
  DhtMessage fv = base(MessageKind::FindValueRequest);
  fv.target = NodeId::of_key("key");
  out.push_back(fv);
  DhtMessage fvr = base(MessageKind::FindValueResponse);
  fvr.record = Record(TimedValue{b("value"), 99.25});
  fvr.contacts = found.contacts;
  out.push_back(fvr);
  DhtMessage fvd = base(MessageKind::FindValueResponse);
  fvd.record = Record(Dictionary{{b("a"), {b("1"), 10}}, {b("b"), {b(""), 20}}});
  out.push_back(fvd);
  out.push_back(base(MessageKind::FindValueResponse));  // no record, no contacts
  DhtMessage st = base(MessageKind::StoreRequest);
  st.target = NodeId::of_key("key");
  st.value = {b("v"), 60};
  out.push_back(st);
  DhtMessage sts = st;
  sts.subkey = b("peer-7");
  out.push_back(sts);
  DhtMessage ok = base(MessageKind::StoreResponse);
  ok.stored = true;
  out.push_back(ok);
  return out;
}

TEST(DhtMessages, EveryKindRoundTrips) {
  const WireLimits limits;
  for (const DhtMessage& m : samples()) {
    const auto bytes = encode(m);
    EXPECT_EQ(bytes[0], static_cast<std::uint8_t>(ServiceId::Dht));
    EXPECT_EQ(peek_service(bytes), ServiceId::Dht);
    EXPECT_EQ(decode(bytes, limits), m) << "kind " << int(m.kind);
  }
}

TEST(DhtMessages, HeaderIsCompact) {
  // service + kind + flags + 2-byte request id + 20-byte id + 8-byte time
  EXPECT_EQ(encode(base(MessageKind::PingRequest)).size(), 33u);
  EXPECT_EQ(encode(base(MessageKind::PingRequest, kHydraIdBits)).size(), 45u);  // a 32-byte id
}

// The same messages with Hydra's 256-bit ids (docs/hydra.md §1).
std::vector<DhtMessage> wide_samples() {
  Rng rng(3);
  std::vector<DhtMessage> out;
  for (DhtMessage m : samples()) {
    m.id_bits = kHydraIdBits;
    m.sender = NodeId::random(rng, kHydraIdBits);
    if (!m.target.is_zero()) m.target = NodeId::random(rng, kHydraIdBits);
    for (Contact& c : m.contacts) c.id = NodeId::random(rng, kHydraIdBits);
    out.push_back(std::move(m));
  }
  return out;
}

TEST(DhtMessages, WideIdsRoundTripAndEachWidthRejectsTheOther) {
  WireLimits wide;
  wide.id_bits = kHydraIdBits;
  const WireLimits narrow;
  for (const DhtMessage& m : wide_samples()) {
    const auto bytes = encode(m);
    EXPECT_EQ(decode(bytes, wide), m) << "kind " << int(m.kind);
    EXPECT_THROW(decode(bytes, narrow), DecodeError) << "kind " << int(m.kind);
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(decode(std::span(bytes.data(), n), wide), DecodeError) << "kind " << int(m.kind) << " at " << n;
  }
  for (const DhtMessage& m : samples()) EXPECT_THROW(decode(encode(m), wide), DecodeError) << "kind " << int(m.kind);
  // An id that does not fit the message's width is a caller's error, not a silent truncation.
  DhtMessage bad = base(MessageKind::PingRequest, kHydraIdBits);
  bad.id_bits = kKademliaIdBits;
  EXPECT_THROW(encode(bad), std::invalid_argument);
}

TEST(DhtMessages, EveryTruncationIsRejected) {
  const WireLimits limits;
  for (const DhtMessage& m : samples()) {
    const auto bytes = encode(m);
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(decode(std::span(bytes.data(), n), limits), DecodeError) << "kind " << int(m.kind) << " at " << n;
  }
}

TEST(DhtMessages, TrailingGarbageIsRejected) {
  const WireLimits limits;
  for (const DhtMessage& m : samples()) {
    auto bytes = encode(m);
    bytes.push_back(0);
    EXPECT_THROW(decode(bytes, limits), DecodeError);
  }
}

TEST(DhtMessages, OversizedMessagesAndFieldsAreRejected) {
  WireLimits limits;
  limits.max_message_bytes = 100;
  limits.max_value_bytes = 8;
  limits.max_subkey_bytes = 4;
  limits.max_contacts = 2;

  DhtMessage st = base(MessageKind::StoreRequest);
  st.value = {Bytes(9, 1), 10};
  EXPECT_THROW(decode(encode(st), limits), DecodeError);  // value too long
  st.value = {Bytes(8, 1), 10};
  EXPECT_NO_THROW(decode(encode(st), limits));
  st.subkey = Bytes(5, 2);
  EXPECT_THROW(decode(encode(st), limits), DecodeError);  // subkey too long

  DhtMessage found = base(MessageKind::FindNodeResponse);
  found.contacts.assign(3, Contact{NodeId::of_key("x"), 1});
  EXPECT_THROW(decode(encode(found), limits), DecodeError);  // too many contacts

  DhtMessage big = base(MessageKind::FindNodeResponse);
  big.contacts.assign(4, Contact{NodeId::of_key("x"), 1});
  limits.max_contacts = 10;
  EXPECT_THROW(decode(encode(big), limits), DecodeError);  // whole message over 100 bytes

  // A count larger than the input could hold is rejected before anything is allocated.
  auto bytes = encode(base(MessageKind::FindNodeResponse));
  bytes.pop_back();  // the zero contact count
  for (std::uint8_t byte : {0xFF, 0xFF, 0xFF, 0xFF, 0x0F}) bytes.push_back(byte);
  EXPECT_THROW(decode(bytes, WireLimits{}), DecodeError);
}

TEST(DhtMessages, MalformedFieldsAreRejected) {
  const WireLimits limits;
  const auto ping = encode(base(MessageKind::PingRequest));
  auto corrupt = [&](std::size_t at, std::uint8_t v) {
    auto c = ping;
    c[at] = v;
    return c;
  };
  EXPECT_THROW(decode(corrupt(0, 2), limits), DecodeError);    // another service
  EXPECT_THROW(decode(corrupt(1, 0), limits), DecodeError);    // kind 0
  EXPECT_THROW(decode(corrupt(1, 9), limits), DecodeError);    // kind 9
  EXPECT_THROW(decode(corrupt(2, 2), limits), DecodeError);    // unknown flag
  EXPECT_THROW(decode(std::vector<std::uint8_t>{}, limits), DecodeError);

  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    DhtMessage m = base(MessageKind::PingRequest);
    m.sender_time = bad;
    EXPECT_THROW(decode(encode(m), limits), DecodeError);
    DhtMessage st = base(MessageKind::StoreRequest);
    st.value.expiration = bad;
    EXPECT_THROW(decode(encode(st), limits), DecodeError);
  }

  DhtMessage ok = base(MessageKind::StoreResponse);
  auto okb = encode(ok);
  okb.back() = 2;  // booleans are 0 or 1
  EXPECT_THROW(decode(okb, limits), DecodeError);

  DhtMessage rec = base(MessageKind::FindValueResponse);
  rec.record = Record(TimedValue{b("v"), 1});
  auto recb = encode(rec);
  recb[33] = 3;  // unknown record tag
  EXPECT_THROW(decode(recb, limits), DecodeError);
}

TEST(DhtMessages, DictionariesMustBeNonEmptyAndSorted) {
  const WireLimits limits;
  DhtMessage m = base(MessageKind::FindValueResponse);
  m.record = Record(Dictionary{{b("a"), {b("1"), 10}}, {b("b"), {b("2"), 10}}});
  auto bytes = encode(m);
  // Swap the two one-byte subkeys: "b" then "a" is out of order.
  const std::size_t first = 33 + 1 + 1 + 1;  // tag, count, subkey length
  ASSERT_EQ(bytes[first], 'a');
  const std::size_t second = first + 1 + 2 + 8 + 1;
  ASSERT_EQ(bytes[second], 'b');
  std::swap(bytes[first], bytes[second]);
  EXPECT_THROW(decode(bytes, limits), DecodeError);
  bytes[second] = 'a';  // a duplicate subkey
  bytes[first] = 'a';
  EXPECT_THROW(decode(bytes, limits), DecodeError);

  DhtMessage empty = base(MessageKind::FindValueResponse);
  empty.record = Record(Dictionary{});
  EXPECT_THROW(decode(encode(empty), limits), DecodeError);
}

TEST(DhtMessages, PeerIdsMustFitThirtyTwoBits) {
  DhtMessage m = base(MessageKind::FindNodeResponse);
  m.contacts.push_back({NodeId::of_key("x"), 0xFFFFFFFFu});
  auto bytes = encode(m);
  EXPECT_NO_THROW(decode(bytes, WireLimits{}));
  // Rewrite the peer varint as 2^32.
  bytes.resize(bytes.size() - 5);
  for (std::uint8_t byte : {0x80, 0x80, 0x80, 0x80, 0x10}) bytes.push_back(byte);
  EXPECT_THROW(decode(bytes, WireLimits{}), DecodeError);
}

// A reply nobody reads any more (its lookup finished) is decoded with ReplyBody::CheckOnly: the
// same verdict on every input as a full decode, with the record and contacts left out.
TEST(DhtMessages, ACheckOnlyDecodeJudgesLikeAFullOneAndBuildsNoBody) {
  const WireLimits limits;
  for (const DhtMessage& m : samples()) {
    DhtMessage expected = m;
    expected.record.reset();
    expected.contacts.clear();
    const auto bytes = encode(m);
    EXPECT_EQ(decode(bytes, limits, ReplyBody::CheckOnly), expected);
    EXPECT_EQ(response_request_id(bytes), is_request(m.kind) ? std::nullopt : std::optional<std::uint64_t>(300));
    // Every truncation and every single-byte change: both decodes throw, or neither does.
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_THROW(decode(cut, limits, ReplyBody::CheckOnly), DecodeError);
      for (std::uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::vector<std::uint8_t> changed = bytes;
        changed[n] ^= flip;
        bool full_ok = true, check_ok = true;
        try { decode(changed, limits); } catch (const DecodeError&) { full_ok = false; }
        try { decode(changed, limits, ReplyBody::CheckOnly); } catch (const DecodeError&) { check_ok = false; }
        EXPECT_EQ(full_ok, check_ok) << "byte " << n << " ^ " << int(flip);
      }
    }
  }
}

}  // namespace
}  // namespace swarmlab::core::dht
