#include "core/dht/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "dht/hex.h"

namespace swarmlab::core::dht {
namespace {

using testing::hex;

// The examples published with FIPS 180 (one block, two blocks, a million 'a') and common strings.
TEST(Sha256, FipsVectors) {
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EmptyAndCommonStrings) {
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("The quick brown fox jumps over the lazy dog")),
            "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592");
  EXPECT_EQ(hex(sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, IncrementalUpdatesMatchOneShotAtEveryPaddingBoundary) {
  for (std::size_t n : {0u, 1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u, 1000u}) {
    std::string data(n, '\0');
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<char>(i * 31 + 7);
    const Sha256Digest whole = sha256(data);
    for (std::size_t split : {std::size_t{0}, n / 3, n / 2, n}) {
      Sha256 s;
      s.update(std::string_view(data).substr(0, split));
      s.update(std::string_view(data).substr(split));
      EXPECT_EQ(s.digest(), whole) << n << " bytes split at " << split;
    }
  }
}

}  // namespace
}  // namespace swarmlab::core::dht
