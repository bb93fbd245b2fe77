// Encode and decode throughput of each wire codec, in GB/s of fp32 input (SetBytesProcessed), next
// to a memcpy of the same 16 MiB buffer.
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/codec/codec.h"
#include "core/rng.h"

namespace {

using swarmlab::core::codec::Codec;
constexpr std::size_t kFloats = (16u << 20) / sizeof(float);  // 16 MiB of fp32

const std::vector<float>& input() {
  static const std::vector<float> v = [] {
    swarmlab::core::Rng rng(1);
    std::vector<float> x(kFloats);
    for (float& f : x) f = static_cast<float>(0.01 * rng.normal());
    return x;
  }();
  return v;
}

void BM_Memcpy(benchmark::State& state) {
  const auto& in = input();
  std::vector<float> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state) {
  const auto codec = static_cast<Codec>(state.range(0));
  const auto& in = input();
  std::vector<std::uint8_t> out;
  out.reserve(swarmlab::core::codec::encoded_size(codec, in.size()));
  for (auto _ : state) {
    out.clear();
    swarmlab::core::codec::encode(codec, in, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
  state.SetLabel(std::string(swarmlab::core::codec::name(codec)));
}

void BM_Decode(benchmark::State& state) {
  const auto codec = static_cast<Codec>(state.range(0));
  const auto& in = input();
  std::vector<std::uint8_t> bytes;
  swarmlab::core::codec::encode(codec, in, bytes);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    swarmlab::core::codec::decode(codec, bytes, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size() * sizeof(float)));
  state.SetLabel(std::string(swarmlab::core::codec::name(codec)));
}

// Args: the Codec enumerators in declaration order.
BENCHMARK(BM_Encode)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace
