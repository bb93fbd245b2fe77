// Encode and decode throughput of each wire codec, in GB/s of fp32 input (SetBytesProcessed), next
// to a memcpy of the same buffer. Arguments: the codec (Codec enumerators in declaration order:
// 0 fp32, 1 fp16, 2 fp16-scaled, 3 uint8); the kernel build (0 the one this CPU runs: AVX-512F,
// else AVX2/FMA/F16C, else scalar; 1 the portable scalar build; 2 AVX2/FMA/F16C); the size in MiB of fp32
// (16: the figure, beyond the caches; 1: about one 512 KiB fp16 part, what averaging
// encodes at a time).
// Target: fp16, fp16-scaled and uint8 at >= 50% of memcpy's bandwidth at the same size.
// BM_Moments compares the codecs' mean/σ pass with Eigen's (mean(), then the centred squares).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "core/codec/codec.h"
#include "core/codec/kernels.h"
#include "core/rng.h"

namespace {

using swarmlab::core::codec::Codec;
namespace detail = swarmlab::core::codec::detail;

// 0: what this CPU runs; 1: the portable scalar build; 2: the AVX2/FMA/F16C build (where the CPU runs
// AVX-512F too, for comparison; falls back to scalar elsewhere, as its label then says).
const detail::Kernels& build(std::int64_t arg) {
  if (arg == 0) return detail::kernels();
  if (arg == 2 && detail::avx2_kernels()) return *detail::avx2_kernels();
  return detail::scalar_kernels();
}

// The first `mib` MiB of one 16 MiB gradient-like vector (N(0, 0.01²)).
std::span<const float> input(std::int64_t mib) {
  static const std::vector<float> v = [] {
    swarmlab::core::Rng rng(1);
    std::vector<float> x((16u << 20) / sizeof(float));
    for (float& f : x) f = static_cast<float>(0.01 * rng.normal());
    return x;
  }();
  return std::span<const float>(v).first(static_cast<std::size_t>(mib) * (1u << 20) / sizeof(float));
}

void BM_Memcpy(benchmark::State& state) {
  const auto in = input(state.range(0));
  std::vector<float> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
}
BENCHMARK(BM_Memcpy)->Arg(16)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state) {
  const auto codec = static_cast<Codec>(state.range(0));
  const auto& k = build(state.range(1));
  const auto in = input(state.range(2));
  std::vector<std::uint8_t> out;
  out.reserve(swarmlab::core::codec::encoded_size(codec, in.size()));
  for (auto _ : state) {
    out.clear();
    detail::encode_with(k, codec, in, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
  state.SetLabel(std::string(swarmlab::core::codec::name(codec)) + " " + k.name);
}

void BM_Decode(benchmark::State& state) {
  const auto codec = static_cast<Codec>(state.range(0));
  const auto& k = build(state.range(1));
  const auto in = input(state.range(2));
  std::vector<std::uint8_t> bytes;
  swarmlab::core::codec::encode(codec, in, bytes);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    detail::decode_with(k, codec, bytes, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
  state.SetLabel(std::string(swarmlab::core::codec::name(codec)) + " " + k.name);
}

BENCHMARK(BM_Encode)->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}, {16, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode)->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}, {16, 1}})->Unit(benchmark::kMillisecond);

// Mean and σ of one part: Eigen's reductions (its own summation order, which depends on the SIMD
// width it was compiled for) against the codecs' blocked sums (fixed order, the same bits on every
// build). Argument: 0 the codecs' kernels, 1 Eigen.
void BM_Moments(benchmark::State& state) {
  const auto in = input(1);
  const auto& k = detail::kernels();
  for (auto _ : state) {
    double mean = 0, sigma = 0;
    if (state.range(0) == 0) {
      const detail::Moments m = detail::moments(k, in);
      mean = m.mean;
      sigma = m.sigma;
    } else {
      const Eigen::Map<const Eigen::ArrayXf> x(in.data(), static_cast<Eigen::Index>(in.size()));
      mean = x.mean();
      sigma = std::sqrt((x - static_cast<float>(mean)).square().mean());
    }
    benchmark::DoNotOptimize(mean);
    benchmark::DoNotOptimize(sigma);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
  state.SetLabel(state.range(0) == 0 ? "blocked kernels" : "Eigen");
}
BENCHMARK(BM_Moments)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
