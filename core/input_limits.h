#pragma once
// Documented limits on every size, count, duration and rate a user can hand the project (scenario
// files, traces, command-line values), checked where each value is read (scenarios/README.md,
// "Limits", has the table). They keep arithmetic exact (no product of two limits overflows 64
// bits or loses integer precision in a double) and keep a hostile file from exhausting memory
// before any cost estimate can look at it. What a valid input costs to run is estimated separately
// (sim/experiments/run_cost.h) and refused past the machine's budget.
#include <cstdint>

namespace swarmlab::core::limits {

// Files.
inline constexpr std::uint64_t kMaxScenarioFileBytes = 16ull << 20;  // 16 MiB of JSON
inline constexpr std::uint64_t kMaxTraceFileBytes = 64ull << 20;     // 64 MiB of CSV
inline constexpr std::uint64_t kMaxTraceRows = 1'000'000;
inline constexpr std::uint64_t kMaxSweepTableBytes = 1ull << 30;  // a sweep's results table or run record

// Time: any time or duration (join/leave times, trace times, timeouts, simulated durations) is at
// most 10^8 s (about 3.2 years); the simulator's clock keeps 10 ns resolution there.
inline constexpr double kMaxSeconds = 1e8;
inline constexpr double kMaxLatencySeconds = 60;  // one-way access latency

// Rates.
inline constexpr double kMaxBandwidthBps = 1e13;   // 10 Tb/s
inline constexpr double kMinBandwidthBps = 1e3;    // 1 kb/s: an access link slower than this is no link
inline constexpr double kMaxComputeSps = 1e9;      // samples/s

// Counts and sizes.
inline constexpr std::uint64_t kMaxPeers = 100'000;          // peers of a scenario, after expansion
inline constexpr std::uint64_t kMaxPairCaps = 1'000'000;     // ordered pairs capped, after expansion
inline constexpr std::uint64_t kMaxDhtPeers = 1'000'000;     // a DHT-only scenario's peers
inline constexpr std::uint64_t kMaxParameters = 1'000'000'000'000ull;  // 10^12 gradient elements
inline constexpr std::uint64_t kMaxTargetBatch = 1'000'000'000'000ull;
inline constexpr std::uint64_t kMaxRounds = 1'000'000;
inline constexpr std::uint64_t kMinPartBytes = 1024;
inline constexpr std::uint64_t kMaxPartBytes = 1ull << 30;
inline constexpr std::uint64_t kMinStateChunkBytes = 1024;
inline constexpr std::uint64_t kMaxStateChunkBytes = 1ull << 26;
inline constexpr double kMaxStateBytesPerParameter = 1024;
inline constexpr double kMinMetricsIntervalSeconds = 1;
inline constexpr std::uint64_t kMaxFailures = 100'000;  // injected failures listed in a scenario

// The DeDLOC planner (sim/experiments/run_cost.h, check_planner_size): peers its LP with fixed
// roles (strategy "ours") and its roles search (swarmlab plan) solve within seconds. Past them a
// run is refused, never handed to GLPK.
inline constexpr std::uint64_t kMaxPlannerPeers = 256;
inline constexpr std::uint64_t kMaxPlannerRolesPeers = 128;

// Command-line rates and counts.
inline constexpr double kMaxOpsPerPeerHour = 1e6;   // dht --gets/--puts-per-peer-hour
inline constexpr double kMaxChurnPerHour = 100;     // fraction of peers replaced per hour
inline constexpr double kMaxDhtReplacements = 1e7;  // churn × peers × hours (addresses allocated up front)
inline constexpr std::uint64_t kMaxLiveParameters = 1'000'000'000;  // launch --parameters: 4 GB fp32 per peer

// Parts of a span are numbered in 32 bits (RoundPlan::parts_in_span): even the largest gradient
// (4 bytes per element) in the smallest parts fits.
static_assert(kMaxParameters * 4 / kMinPartBytes < 0xFFFFFFFFull);
// Products the simulator forms stay exact: bytes of a gradient times peers, state bytes.
static_assert(kMaxParameters * 4 < (1ull << 53) / 1024);
static_assert(kMaxPeers * kMaxPeers < (1ull << 53));

}  // namespace swarmlab::core::limits
