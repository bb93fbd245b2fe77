// The expert protocol's wire format (core/dmoe/expert_messages.h): round trips of every kind, with
// carried and virtual tensors, and every way a message can be malformed.
#include "core/dmoe/expert_messages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::dmoe {
namespace {

Tensor carried(std::uint32_t rows, std::uint32_t cols, float first = 1.0f) {
  Tensor t = Tensor::zeros(rows, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = first + 0.25f * static_cast<float>(i);
  return t;
}

ExpertMessage forward(Tensor input) {
  ExpertMessage m;
  m.kind = ExpertKind::Forward;
  m.request_id = 0x0102030405060708ull;
  m.uid = {3, 17};
  m.tensor = std::move(input);
  return m;
}

void expect_same(const ExpertMessage& a, const ExpertMessage& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.request_id, b.request_id);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.tensor, b.tensor);
  EXPECT_EQ(a.grad_output, b.grad_output);
  if (a.kind == ExpertKind::Error) {
    EXPECT_EQ(a.error, b.error);
  }
}

// Encodes, checks the virtual bytes, decodes and compares; the re-encoding is byte for byte the same.
void round_trip(const ExpertMessage& m, std::uint64_t virtual_bytes) {
  const Message encoded = encode_expert(m);
  ASSERT_FALSE(encoded.bytes.empty());
  EXPECT_EQ(peek_service(encoded.bytes), ServiceId::Experts);
  EXPECT_EQ(encoded.virtual_bytes, virtual_bytes);
  const ExpertMessage decoded = decode_expert(encoded);
  expect_same(m, decoded);
  const Message again = encode_expert(decoded);
  EXPECT_EQ(again.bytes, encoded.bytes);
  EXPECT_EQ(again.virtual_bytes, encoded.virtual_bytes);
}

// The header every message starts with, for hand-built messages.
std::vector<std::uint8_t> header(std::uint8_t kind, std::uint64_t request_id = 9) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(ServiceId::Experts));
  w.u8(kind);
  w.u64(request_id);
  return out;
}

void expect_rejected(std::vector<std::uint8_t> bytes, std::uint64_t virtual_bytes = 0) {
  EXPECT_THROW(decode_expert(Message{std::move(bytes), virtual_bytes}), DecodeError);
}

TEST(ExpertMessages, ForwardRoundTripsCarriedAndVirtual) {
  round_trip(forward(carried(2, 3)), 0);
  round_trip(forward(Tensor::sized(5, 7)), 5 * 7 * 4);
  ExpertMessage far = forward(carried(1, 1));
  far.uid = {0, kMaxGridSide - 1, 1, 2, 3, 4, 5, 6};  // eight coordinates, the largest one
  far.request_id = std::numeric_limits<std::uint64_t>::max();
  round_trip(far, 0);
  // Special float values are carried bit for bit (the runtime, not the codec, refuses them).
  Tensor odd = carried(1, 3);
  odd.values = {std::numeric_limits<float>::quiet_NaN(), -0.0f, std::numeric_limits<float>::infinity()};
  const Message encoded = encode_expert(forward(odd));
  EXPECT_EQ(encode_expert(decode_expert(encoded)).bytes, encoded.bytes);
}

TEST(ExpertMessages, BackwardRoundTripsAndSumsItsVirtualTensors) {
  ExpertMessage m = forward(carried(2, 4));
  m.kind = ExpertKind::Backward;
  m.grad_output = carried(2, 3, -1.0f);
  round_trip(m, 0);
  m.tensor = Tensor::sized(8, 16);
  m.grad_output = Tensor::sized(8, 32);
  round_trip(m, 8 * 16 * 4 + 8 * 32 * 4);
  m.grad_output = carried(8, 2);  // one of each
  round_trip(m, 8 * 16 * 4);
}

TEST(ExpertMessages, OutputAndErrorRoundTrip) {
  ExpertMessage out;
  out.kind = ExpertKind::Output;
  out.request_id = 77;
  out.tensor = carried(3, 2);
  round_trip(out, 0);
  out.tensor = Tensor::sized(3, 1000);
  round_trip(out, 3 * 1000 * 4);
  out.tensor = Tensor::zeros(0, 5);  // an empty tensor is well-formed (the runtime refuses no rows)
  round_trip(out, 0);
  for (const ExpertError e : {ExpertError::UnknownExpert, ExpertError::BadShape, ExpertError::NonFinite,
                              ExpertError::Overloaded}) {
    ExpertMessage err;
    err.kind = ExpertKind::Error;
    err.request_id = 5;
    err.error = e;
    round_trip(err, 0);
    EXPECT_EQ(encode_expert(err).bytes.size(), 11u);
    EXPECT_STRNE(expert_error_name(e), "unknown error");
  }
}

TEST(ExpertMessages, RejectsAnotherServiceOrAnUnknownKind) {
  Message m = encode_expert(forward(carried(1, 2)));
  m.bytes[0] = static_cast<std::uint8_t>(ServiceId::Dht);
  EXPECT_THROW(decode_expert(m), DecodeError);
  for (const std::uint8_t kind : {0, 5, 255}) {
    Message k = encode_expert(forward(carried(1, 2)));
    k.bytes[1] = kind;
    EXPECT_THROW(decode_expert(k), DecodeError) << int{kind};
  }
  EXPECT_THROW(decode_expert(Message{}), DecodeError);
}

TEST(ExpertMessages, RejectsEveryTruncationAndTrailingBytes) {
  ExpertMessage b = forward(carried(2, 2));
  b.kind = ExpertKind::Backward;
  b.grad_output = carried(2, 3);
  ExpertMessage err;
  err.kind = ExpertKind::Error;
  err.error = ExpertError::Overloaded;
  for (const ExpertMessage& m : {forward(carried(2, 3)), b, err}) {
    const Message full = encode_expert(m);
    for (std::size_t n = 0; n < full.bytes.size(); ++n)
      expect_rejected(std::vector<std::uint8_t>(full.bytes.begin(), full.bytes.begin() + static_cast<std::ptrdiff_t>(n)));
    std::vector<std::uint8_t> longer = full.bytes;
    longer.push_back(0);
    expect_rejected(longer);
  }
}

TEST(ExpertMessages, RejectsUidsOutsideEveryGrid) {
  ExpertMessage none = forward(carried(1, 1));
  none.uid = {};
  expect_rejected(encode_expert(none).bytes);
  ExpertMessage nine = forward(carried(1, 1));
  nine.uid = ExpertUid(kMaxGridDims + 1, 0);
  expect_rejected(encode_expert(nine).bytes);
  ExpertMessage wide = forward(carried(1, 1));
  wide.uid = {1, kMaxGridSide};
  expect_rejected(encode_expert(wide).bytes);
  // A count the rest of the message cannot hold.
  std::vector<std::uint8_t> huge = header(1);
  Writer(huge).varint(1u << 30);
  expect_rejected(huge);
}

TEST(ExpertMessages, RejectsABadTensorFlagOrATensorBeyondAMessage) {
  std::vector<std::uint8_t> flag = header(3);
  Writer w(flag);
  w.varint(1);
  w.varint(1);
  w.u8(2);
  w.f32(1.0f);
  expect_rejected(flag);
  // The same with flag 0 is a good Output: only the flag is wrong.
  flag[flag.size() - 5] = 0;
  EXPECT_NO_THROW(decode_expert(Message{flag, 0}));

  const auto virtual_output = [](std::uint64_t rows, std::uint64_t cols) {
    std::vector<std::uint8_t> out = header(3);
    Writer v(out);
    v.varint(rows);
    v.varint(cols);
    v.u8(1);
    return Message{out, 4 * rows * cols};
  };
  EXPECT_NO_THROW(decode_expert(virtual_output(4096, 4096)));  // 64 MiB of values: exactly a message's worth
  EXPECT_THROW(decode_expert(virtual_output(4096, 4097)), DecodeError);
  EXPECT_THROW(decode_expert(virtual_output(kMaxMessageBytes + 1, 0)), DecodeError);
  EXPECT_THROW(decode_expert(virtual_output(0, kMaxMessageBytes + 1)), DecodeError);
  EXPECT_THROW(decode_expert(virtual_output(1ull << 40, 1ull << 40)), DecodeError);
  // A carried tensor whose values are not there.
  std::vector<std::uint8_t> missing = header(3);
  Writer m(missing);
  m.varint(1000);
  m.varint(1000);
  m.u8(0);
  expect_rejected(missing);
}

TEST(ExpertMessages, RejectsVirtualBytesThatDisagreeWithTheTensors) {
  Message v = encode_expert(forward(Tensor::sized(4, 4)));
  ASSERT_EQ(v.virtual_bytes, 64u);
  expect_rejected(v.bytes, 63);
  expect_rejected(v.bytes, 65);
  expect_rejected(v.bytes, 0);
  const Message c = encode_expert(forward(carried(4, 4)));
  expect_rejected(c.bytes, 1);  // a carried tensor claims no virtual bytes
  ExpertMessage err;
  err.kind = ExpertKind::Error;
  expect_rejected(encode_expert(err).bytes, 4);
}

TEST(ExpertMessages, RejectsAnUnknownErrorCode) {
  for (const std::uint8_t code : {0, 5, 255}) {
    std::vector<std::uint8_t> bytes = header(4);
    bytes.push_back(code);
    expect_rejected(bytes);
  }
  EXPECT_STREQ(expert_error_name(static_cast<ExpertError>(9)), "unknown error");
}

TEST(ExpertMessages, RejectsVarintsNotInTheirShortestForm) {
  // The uid count 1 written as two bytes.
  std::vector<std::uint8_t> count = header(1);
  count.insert(count.end(), {0x81, 0x00, 0x02});  // count 1 (padded), coordinate 2
  Writer w(count);
  w.varint(1);
  w.varint(1);
  w.u8(0);
  w.f32(0.5f);
  expect_rejected(count);
  // The same message with the shortest count decodes.
  std::vector<std::uint8_t> shortest = header(1);
  shortest.insert(shortest.end(), {0x01, 0x02});
  shortest.insert(shortest.end(), count.end() - 7, count.end());
  EXPECT_EQ(decode_expert(Message{shortest, 0}).uid, (ExpertUid{2}));
  // A padded tensor dimension.
  std::vector<std::uint8_t> rows = header(3);
  rows.insert(rows.end(), {0x80, 0x00, 0x01, 0x01});  // rows 0 (padded), cols 1, virtual
  expect_rejected(rows);
}

TEST(ExpertMessages, EncodingATensorWhoseValuesDisagreeWithItsShapeIsAProgrammingError) {
  Tensor t = carried(2, 2);
  t.values.pop_back();
  EXPECT_THROW(encode_expert(forward(t)), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
