#!/usr/bin/env bash
# Builds the DHT message fuzzer with clang (libFuzzer + ASan + UBSan) and runs it for a fixed time
# over the seed corpus. Not part of the CMake build (which uses g++); CI calls this script.
#
#   tests/fuzz/run_fuzz.sh [seconds]      default 30
#
# Environment: CXX (default clang++-14, else clang++), BUILD_DIR (default build-fuzz), and
# REGENERATE_CORPUS=1 to rewrite the seeds in tests/fuzz/corpus/dht/ first.
set -euo pipefail

seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cxx="${CXX:-$(command -v clang++-14 || command -v clang++)}"
build="${BUILD_DIR:-$root/build-fuzz}"
corpus_seeds="$root/tests/fuzz/corpus/dht"
mkdir -p "$build"

sources=(
  "$root"/core/wire.cc
  "$root"/core/dht/*.cc
  "$root"/sim/engine.cc
  "$root"/sim/binding/sim_world.cc
  "$root"/sim/binding/chrome_trace.cc
  "$root"/sim/network/latency_network.cc
)
flags=(-std=c++20 -O1 -g -I "$root" -fno-omit-frame-pointer)

if [[ "${REGENERATE_CORPUS:-0}" == 1 ]]; then
  "$cxx" "${flags[@]}" -DDHT_FUZZ_MAKE_CORPUS "$root/tests/fuzz/dht_message_fuzz.cc" "${sources[@]}" \
    -o "$build/make_dht_corpus"
  rm -f "$corpus_seeds"/*
  "$build/make_dht_corpus" "$corpus_seeds"
fi

"$cxx" "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "$root/tests/fuzz/dht_message_fuzz.cc" "${sources[@]}" -o "$build/dht_message_fuzz"

# New inputs go to a scratch corpus so the checked-in seeds stay small and reviewed.
work="$build/corpus-dht"
mkdir -p "$work"
"$build/dht_message_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work" "$corpus_seeds"
