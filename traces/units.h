#pragma once
// Quantities with units, as people write them on command lines and in scenario files:
// durations ("8h", "90 min", "250ms", "3600") and bandwidths ("200 Mb/s", "25Gbps", "1e9").
// Units are decimal SI and bandwidth is always in bits: 1 Gb/s = 10^9 bit/s.
#include <string>
#include <string_view>

namespace swarmlab::traces {

// A non-negative duration in seconds. A bare number is in `bare_unit_s` seconds (1 = seconds,
// 1e-3 = milliseconds). Units: ms, s, min, h, d (optionally separated from the number by spaces).
// Throws core::InputError(source, location, ...) naming the accepted units.
double parse_duration(std::string_view text, const std::string& source, const std::string& location,
                      double bare_unit_s = 1.0);

// A non-negative bandwidth in bits/s. A bare number is bits/s. Units: bps or b/s, with an
// optional prefix k/K, M, G or T ("200 Mb/s", "25Gbps"). Byte units ("MB/s") are rejected.
// Throws core::InputError(source, location, ...).
double parse_bandwidth(std::string_view text, const std::string& source, const std::string& location);

// "8h", "30min", "45s", "250ms" (largest unit up to hours) or plain seconds, whichever is exact and shortest;
// for messages and generated file headers.
std::string format_duration(double seconds);

inline constexpr std::string_view kDurationUnits = "ms, s, min, h, d";
inline constexpr std::string_view kBandwidthUnits = "bps or b/s with an optional k, M, G or T prefix";

}  // namespace swarmlab::traces
