#!/usr/bin/env bash
# Builds a libFuzzer target with clang (libFuzzer + ASan + UBSan) and runs it for a fixed time over
# its seed corpus. Not part of the CMake build (which uses g++); CTest and CI call this script.
#
#   tests/fuzz/run_fuzz.sh [target] [seconds]      target: dht (default), raft, allreduce, tracker, training, live, transport, group, auth, relay, dmoe, learn, scenario, trace or idx; seconds: 30
#   tests/fuzz/run_fuzz.sh [seconds]               the DHT target, as before
#
# Target <t> is tests/fuzz/<t>_message_fuzz.cc (or <t>_fuzz.cc: idx, the dataset files' decoder) with its seeds in tests/fuzz/corpus/<t>/.
# Environment: CXX (default clang++-14, else clang++), BUILD_DIR (default build-fuzz), and
# REGENERATE_CORPUS=1 to rewrite the target's seeds first (the file built with
# -D<T>_FUZZ_MAKE_CORPUS writes them).
set -euo pipefail

target=dht
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then
  target="$1"
  shift
fi
seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cxx="${CXX:-$(command -v clang++-14 || command -v clang++)}"
build="${BUILD_DIR:-$root/build-fuzz}"
corpus_seeds="$root/tests/fuzz/corpus/$target"
extra_includes=()
mkdir -p "$build" "$corpus_seeds"

fuzzer="$root/tests/fuzz/${target}_message_fuzz.cc"
libs=()
case "$target" in
  dht)
    sources=(
      "$root"/core/wire.cc
      "$root"/core/peer_limits.cc
      "$root"/core/dht/*.cc
      "$root"/sim/engine.cc
      "$root"/sim/binding/sim_world.cc
      "$root"/sim/binding/chrome_trace.cc
      "$root"/sim/network/latency_network.cc
    )
    ;;
  allreduce)
    # The replica groups run on the core's test double (tests/core/support/memory_world.h).
    sources=(
      "$root"/core/wire.cc
      "$root"/core/peer_limits.cc
      "$root"/core/early_messages.cc
      "$root"/core/raft/*.cc
      "$root"/core/allreduce/*.cc
      "$root"/core/averaging/round_plan.cc
      "$root"/core/averaging/centered_clip.cc
      "$root"/core/codec/*.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core" -I /usr/include/eigen3)
    ;;
  raft)
    # The Raft group runs on the core's test double (tests/core/support/memory_world.h).
    sources=(
      "$root"/core/wire.cc
      "$root"/core/peer_limits.cc
      "$root"/core/raft/*.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core")
    ;;
  tracker)
    # A tracker group runs on the core's test double (tests/core/support/memory_world.h).
    sources=(
      "$root"/core/wire.cc
      "$root"/core/peer_limits.cc
      "$root"/core/raft/*.cc
      "$root"/core/tracker/*.cc
      "$root"/core/dht/node_id.cc
      "$root"/core/dht/sha1.cc
      "$root"/core/dht/sha256.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core")
    ;;
  scenario|trace)
    sources=(
      "$root"/scenarios/*.cc
      "$root"/traces/*.cc
      "$root"/core/wire.cc
      "$root"/core/dmoe/expert_grid.cc
    )
    ;;
  training)
    # The simulated learner that takes a downloaded state lives on the core's test double.
    sources=(
      "$root"/core/wire.cc
      "$root"/core/peer_limits.cc
      "$root"/core/progress/peer_progress.cc
      "$root"/core/training/state_messages.cc
      "$root"/sim/binding/virtual_learner.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core")
    ;;
  live)
    sources=(
      "$root"/core/wire.cc
      "$root"/exec/handshake.cc
      "$root"/exec/address_directory.cc
      "$root"/exec/frame_reader.cc
      "$root"/exec/socket_address.cc
    )
    ;;
  transport)
    # Real loopback sockets: the transport's connection handling, on its event loop.
    sources=(
      "$root"/core/wire.cc
      "$root"/exec/tcp_transport.cc
      "$root"/exec/event_loop.cc
      "$root"/exec/handshake.cc
      "$root"/exec/address_directory.cc
      "$root"/exec/frame_reader.cc
      "$root"/exec/socket_address.cc
    )
    ;;
  group)
    sources=(
      "$root"/core/wire.cc
      "$root"/core/matchmaking/messages.cc
      "$root"/core/matchmaking/declaration.cc
      "$root"/core/matchmaking/announcement_codec.cc
      "$root"/core/averaging/part_message.cc
      "$root"/core/codec/codec.cc
      "$root"/core/codec/kernels.cc
    )
    ;;
  auth)
    sources=(
      "$root"/core/wire.cc
      "$root"/core/auth/signing.cc
      "$root"/core/auth/access_token.cc
      "$root"/core/auth/authenticator.cc
    )
    libs=(-lsodium)
    ;;
  relay)
    # The relay layers run on the core's test double (tests/core/support/memory_world.h).
    sources=(
      "$root"/core/wire.cc
      "$root"/core/relay/*.cc
      "$root"/core/planner/*.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core")
    libs=(-lglpk)
    ;;
  dmoe)
    # The expert runtime and client run on the core's test double, with the tests' linear experts.
    sources=(
      "$root"/core/wire.cc
      "$root"/core/dmoe/expert_grid.cc
      "$root"/core/dmoe/expert_messages.cc
      "$root"/core/dmoe/expert_runtime.cc
      "$root"/core/dmoe/expert_client.cc
      "$root"/tests/core/support/memory_world.cc
    )
    extra_includes=(-I "$root/tests/core")
    ;;
  learn)
    sources=("$root"/learn/learner_state.cc "$root"/learn/expert_checkpoint.cc)
    libs=(-lz)
    ;;
  idx)
    sources=("$root"/learn/fashion_mnist.cc)
    fuzzer="$root/tests/fuzz/idx_fuzz.cc"
    libs=(-lz)
    ;;
  *)
    echo "unknown fuzz target '$target' (dht, raft, allreduce, tracker, training, live, transport, group, auth, relay, dmoe, learn, scenario, trace, idx)" >&2
    exit 2
    ;;
esac
flags=(-std=c++20 -O1 -gline-tables-only -I "$root" "${extra_includes[@]}" -fno-omit-frame-pointer)
fuzzer="$root/tests/fuzz/${target}_message_fuzz.cc"
[[ -f "$fuzzer" ]] || fuzzer="$root/tests/fuzz/${target}_fuzz.cc"  # inputs that are files, not messages

if [[ "${REGENERATE_CORPUS:-0}" == 1 ]]; then
  "$cxx" "${flags[@]}" "-D${target^^}_FUZZ_MAKE_CORPUS" "$fuzzer" "${sources[@]}" "${libs[@]}" -o "$build/make_${target}_corpus"
  rm -f "$corpus_seeds"/*
  "$build/make_${target}_corpus" "$corpus_seeds"
fi

# Each source is compiled once into an object cache shared by every target (the scenario and
# trace targets share all their sources, and CTest runs two targets at a time): a per-object lock
# keeps concurrent runs from writing the same file, and the compiler's dependency list rebuilds an
# object when any header it read has changed.
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
objects="$build/objects/$(printf '%s ' "$cxx" "${flags[@]}" | md5sum | cut -c1-12)"
stale() {  # object, dependency file: true when missing or older than anything it was built from
  [[ -f "$1" && -f "$2" ]] || return 0
  local dep
  for dep in $(sed -e 's/\\$//' -e 's/^[^:]*://' "$2"); do
    [[ "$dep" -nt "$1" ]] && return 0
  done
  return 1
}
compile() {  # source, object
  mkdir -p "$(dirname "$2")"
  (
    flock 9
    if stale "$2" "$2.d"; then
      "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link "${sanitize[@]}" -MMD -MF "$2.d" -c "$1" -o "$2.tmp"
      mv "$2.tmp" "$2"
    fi
  ) 9> "$2.lock"
}
compiled=()
pids=()
for src in "$fuzzer" "${sources[@]}"; do  # compiled side by side, at most nproc at a time
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n; done
  obj="$objects/${src#"$root"/}.o"
  compile "$src" "$obj" &
  pids+=($!)
  compiled+=("$obj")
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$cxx" -fsanitize=fuzzer "${sanitize[@]}" "${compiled[@]}" "${libs[@]}" -o "$build/${target}_message_fuzz"

# New inputs go to a scratch corpus so the checked-in seeds stay small and reviewed.
# A finding is written under the build folder, never into the source tree; keep it as a seed
# (tests/fuzz/corpus/<target>/) once it is fixed.
work="$build/corpus-$target"
findings="$build/findings-$target/"
mkdir -p "$work" "$findings"
"$build/${target}_message_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$findings" -print_final_stats=1 "$work" "$corpus_seeds"
