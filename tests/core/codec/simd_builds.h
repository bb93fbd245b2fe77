#pragma once
// The SIMD builds of the codec kernels this CPU runs, for tests that compare each with the portable
// scalar build.
#include <vector>

#include <gtest/gtest.h>

#include "core/codec/kernels.h"

namespace swarmlab::core::codec::detail {

inline std::vector<const Kernels*> simd_builds() {
  std::vector<const Kernels*> builds;
  for (const Kernels* k : {avx2_kernels(), avx512_kernels()})
    if (k) builds.push_back(k);
  return builds;
}

// Runs the rest of the test body once per SIMD build, as `simd`.
#define FOR_EACH_SIMD_BUILD                                                                        \
  if (simd_builds().empty()) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C: only the scalar build runs"; \
  for (const Kernels* simd_build : simd_builds())                                                  \
    if (const Kernels& simd = *simd_build; true)

}  // namespace swarmlab::core::codec::detail
