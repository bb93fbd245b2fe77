#pragma once
// How a scenario becomes a live run, in one place so that `swarmlab peer`, the launcher and
// `validate`'s prediction all see the same collaboration:
// - rates are multiplied by `scale` (a machine that cannot carry the real rates runs them slower,
//   and the simulator predicts the scaled network);
// - the workload's vector length and wire precision may be overridden;
// - access latency is dropped when the links that carry the run do not add it (plain loopback, or
//   a kernel without netem), so the prediction models the network that really exists.
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/codec/codec.h"
#include "core/env.h"
#include "core/planner/planner.h"
#include "scenarios/scenario.h"

namespace swarmlab::exec {

// Hole punching live needs the peers' punch addresses, which only a launch behind emulated NATs
// gives (launch --emulate-links --nat; docs/trust.md §4). Throws core::InputError naming
// nat_traversal.hole_punching when it is on and `punch_addresses` is false.
void check_live_nat_traversal(const scenarios::Scenario& sc, bool punch_addresses);

// The goodput fraction of this project's C++ TCP transport on an emulated link: payload bytes per
// second over the nominal rate, measured with exec/goodput_probe.h (`validate --calibrate`) on
// 100 Mb/s htb links with cubic (exec/README.md, "Transport efficiency"): 0.87-0.92, one stream or
// eight peers all-to-all. TCP/IPv4 headers alone would leave 1448 / 1514 = 0.956; the framing
// adds 4 bytes per 512 KiB part; the rest is TCP's congestion control in shallow queues. 0.90 is
// what the live runs' planner plans with and what `validate` predicts with. The simulator's 0.735
// (sim::TransportAssumptions) describes the hivemind-era stack of the paper, not this one.
inline constexpr double kLiveGoodputFraction = 0.90;

struct LiveOverrides {
  double scale = 1;
  std::optional<std::uint64_t> parameters;
  std::optional<core::codec::Codec> precision;
  bool zero_latency = false;
};

// Throws std::invalid_argument for a non-positive scale or zero parameters.
scenarios::Scenario live_view(const scenarios::Scenario& scenario, const LiveOverrides& overrides);

// A peer's capacity as it announces it in a live run: its compute, and its access link as the
// planner should see it (nominal rate of the live view × goodput).
core::planner::PeerCapacity live_capacity(const scenarios::Scenario& live, core::PeerId peer, double goodput);

// The handshake's run identity: the scenario and a per-launch number.
std::uint64_t network_id(const scenarios::Scenario& scenario, std::uint64_t run_id);

}  // namespace swarmlab::exec
