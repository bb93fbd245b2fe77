#include "core/dht/sha1.h"

#include <gtest/gtest.h>

#include <string>

#include "dht/hex.h"

namespace swarmlab::core::dht {
namespace {

using testing::hex;

// Test vectors from FIPS 180 (Appendix A of 180-1 / the NIST examples) and well-known strings.
TEST(Sha1, FipsVectors) {
  EXPECT_EQ(hex(sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(hex(sha1(std::string(1000000, 'a'))), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, EmptyAndCommonStrings) {
  EXPECT_EQ(hex(sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex(sha1("The quick brown fox jumps over the lazy dog")),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
  EXPECT_EQ(hex(sha1("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "a49b2446a02c645bf419f995b67091253a04a259");
}

TEST(Sha1, IncrementalUpdatesMatchOneShotAtEveryPaddingBoundary) {
  for (std::size_t n : {0u, 1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u, 1000u}) {
    std::string data(n, '\0');
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<char>(i * 31 + 7);
    for (std::size_t split : {std::size_t{0}, n / 3, n / 2, n}) {
      Sha1 s;
      s.update(std::string_view(data).substr(0, split));
      s.update(std::string_view(data).substr(split));
      EXPECT_EQ(s.digest(), sha1(data)) << "length " << n << " split " << split;
    }
  }
}

TEST(Sha1, ByteAtATimeOverAMillionAs) {
  Sha1 s;
  const std::uint8_t a = 'a';
  for (int i = 0; i < 1000000; ++i) s.update(std::span<const std::uint8_t>(&a, 1));
  EXPECT_EQ(hex(s.digest()), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

}  // namespace
}  // namespace swarmlab::core::dht
