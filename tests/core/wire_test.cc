// The wire primitives (core/wire.h): varints have one encoding per value, so a decoded message
// encodes back to the very bytes received.
#include "core/wire.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace swarmlab::core {
namespace {

std::uint64_t read_varint(std::vector<std::uint8_t> bytes) {
  Reader r(bytes);
  const std::uint64_t v = r.varint();
  r.finish();
  return v;
}

TEST(Wire, VarintsRoundTripInTheirShortestForm) {
  for (const std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{127}, std::uint64_t{128}, std::uint64_t{300},
                                std::uint64_t{1} << 35, std::numeric_limits<std::uint64_t>::max()}) {
    std::vector<std::uint8_t> out;
    Writer(out).varint(v);
    EXPECT_EQ(read_varint(out), v);
  }
  std::vector<std::uint8_t> max;
  Writer(max).varint(std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(max.size(), 10u);
  EXPECT_EQ(max.back(), 1);
}

TEST(Wire, LongerEncodingsOfAValueAreRefused) {
  EXPECT_THROW(read_varint({0x80, 0x00}), DecodeError);        // 0 in two bytes
  EXPECT_THROW(read_varint({0xA1, 0x00}), DecodeError);        // 33 in two bytes (a fuzzer's find)
  EXPECT_THROW(read_varint({0xFF, 0x80, 0x00}), DecodeError);  // 127 in three
  // Ten bytes whose last carries bits beyond the 64th.
  EXPECT_THROW(read_varint({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02}), DecodeError);
  EXPECT_THROW(read_varint({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), DecodeError);
}

}  // namespace
}  // namespace swarmlab::core
