// BM_AuthSeal / BM_AuthOpen: the CPU cost of the allowlist authentication per message (core/auth):
// sealing (BLAKE2b over the payload, one Ed25519 signature) and opening (token signature, envelope
// signature, replay check), against BM_AuthCopy, copying the same payload once (what any transport
// does anyway), measured in the same run. Argument: payload bytes (100 B: a DHT request; 64 KiB:
// one averaging part; 1 MiB). The simulator's sign_cost/verify_cost come from these figures
// (docs/trust.md §1).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "core/auth/authenticator.h"

namespace {

using namespace swarmlab::core::auth;

constexpr double kNow = 1.8e9;

KeyPair key(std::uint8_t n) {
  KeySeed s{};
  s.fill(n);
  return keypair_from_seed(s);
}

struct Pair {
  KeyPair authority = key(1), a = key(2), b = key(3);
  Authenticator sender{authority.public_key, a, issue_token(authority, "alice", a.public_key, kNow + 1e6), 1};
  Authenticator receiver{authority.public_key, b, issue_token(authority, "bob", b.public_key, kNow + 1e6), 2};
};

void BM_AuthSeal(benchmark::State& state) {
  Pair p;
  const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 7);
  for (auto _ : state) benchmark::DoNotOptimize(p.sender.seal(p.b.public_key, payload, 0, kNow));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_AuthOpen(benchmark::State& state) {
  Pair p;
  const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 7);
  // Fresh envelopes only: a replay is rejected, which is not the path measured. A batch is sealed
  // outside the timing, and the next batch comes from a new incarnation.
  std::vector<std::vector<std::uint8_t>> sealed;
  for (int i = 0; i < 256; ++i) sealed.push_back(p.sender.seal(p.b.public_key, payload, 0, kNow));
  std::size_t i = 0;
  std::uint64_t incarnation = 100;
  for (auto _ : state) {
    if (i == sealed.size()) {
      state.PauseTiming();
      p.sender = Authenticator(p.authority.public_key, p.a, p.sender.token(), ++incarnation);
      for (auto& s : sealed) s = p.sender.seal(p.b.public_key, payload, 0, kNow);
      i = 0;
      state.ResumeTiming();
    }
    const auto opened = p.receiver.open(sealed[i++], 0, kNow, p.a.public_key);
    if (opened.rejection) {
      state.SkipWithError(name(*opened.rejection));
      break;
    }
    benchmark::DoNotOptimize(opened.payload.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_AuthCopy(benchmark::State& state) {
  const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 7);
  for (auto _ : state) {
    std::vector<std::uint8_t> copy(payload.begin(), payload.end());
    benchmark::DoNotOptimize(copy.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK(BM_AuthSeal)->Arg(100)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_AuthOpen)->Arg(100)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_AuthCopy)->Arg(100)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace
