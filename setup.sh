#!/usr/bin/env bash
# Installs the Debian packages swarmlab needs (only those missing) and builds it into ./build.
# Idempotent: run it again after a pull. Needs root or sudo for apt-get.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  cmake g++ make pkg-config            # toolchain
  libglpk-dev                          # the planner's LP/MIP solver
  libgoogle-perftools-dev              # tcmalloc: the simulator allocates small records in bursts
  libeigen3-dev                        # vector arithmetic in the core (averaging reduction)
  libsodium-dev                        # Ed25519 signatures: the allowlist authentication (core/auth)
  nlohmann-json3-dev libcli11-dev      # scenarios and results as JSON; the CLI
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and benchmarks
  clang libclang-rt-14-dev             # libFuzzer for the message-decoder fuzz tests
  python3 python3-matplotlib           # analysis/ plots
  libns3-dev libgsl-dev libsqlite3-dev # the ns-3 network backend (3.37); ns-3's pkg-config files need GSL and SQLite
  iproute2                             # ip and tc: live runs behind emulated links (exec/)
  nftables                             # nft: NAT for client-mode peers in live runs (launch --nat)
  openmpi-bin libopenmpi-dev           # swarmlab sweep across machines (mpirun / srun)
  chromium                             # headless check of the sweep reports (tests/sweep)
  libtorch-dev zlib1g-dev              # learn/: real training (libtorch 1.13, CPU); gzip datasets
  dataset-fashion-mnist                # learn/: the shipped workload (IDX files, gzip)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
