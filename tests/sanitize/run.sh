#!/usr/bin/env bash
# The sanitized subset of the test suite (CI, after the README's test command): the core's tests,
# the scenario and trace loaders' tests, built with AddressSanitizer and UndefinedBehaviorSanitizer
# in their own build folder. Everything that decodes bytes from the network or from a file is in
# these parts; the live and simulator tests run unsanitized (their time is in sockets and events,
# and ns-3 and libtorch are not built with the sanitizers). Any report fails the run.
#
#   tests/sanitize/run.sh            BUILD_DIR (default build-sanitize), JOBS (default nproc)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-sanitize}"
jobs="${JOBS:-$(nproc)}"
# Unoptimised with line tables only: the sanitizers need no optimiser, and -O2 -g compiled four
# times slower (this build was most of CI's time); the tests still run in under two minutes.
flags="-O0 -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
cmake --build "$build" -j"$jobs" --target core_tests scenarios_tests traces_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Each executable runs as $jobs GoogleTest shards side by side; any failing shard fails the run.
for t in core_tests scenarios_tests traces_tests; do
  echo "sanitized: $t ($jobs shards)"
  pids=()
  for ((shard = 0; shard < jobs; ++shard)); do
    GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$shard "$build/tests/$t" --gtest_brief=1 &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  ((status == 0)) || { echo "sanitized: $t failed" >&2; exit 1; }
done
