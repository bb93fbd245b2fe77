// Every float through every SIMD build of the fp16 encoder against the portable scalar build
// (about 10 s a build): the exhaustive form of tests/core/codec/kernels_test.cc's input classes.
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/codec/kernels.h"
#include "codec/simd_builds.h"

namespace swarmlab::core::codec::detail {
namespace {

TEST(CodecKernelsSlow, HalfEncodingIsBitIdenticalForEveryFloat) {
  std::vector<float> in(1 << 20);
  std::vector<std::uint8_t> a(2 * in.size()), b(2 * in.size());
  FOR_EACH_SIMD_BUILD for (std::uint64_t base = 0; base < (1ull << 32); base += in.size()) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(base + i));
    scalar_kernels().to_half(in.data(), in.size(), a.data());
    simd.to_half(in.data(), in.size(), b.data());
    ASSERT_EQ(a, b) << simd.name << " block at " << base;
  }
}

}  // namespace
}  // namespace swarmlab::core::codec::detail
