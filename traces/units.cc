#include "traces/units.h"

#include <cmath>
#include <utility>

#include "core/input_error.h"
#include "traces/text.h"

namespace swarmlab::traces {

namespace {

// Splits "12.5 Mb/s" into the number and the unit (either may be empty).
std::pair<std::string_view, std::string_view> split_unit(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  text = text.substr(first, text.find_last_not_of(" \t") - first + 1);
  std::size_t i = 0;
  while (i < text.size() && (std::string_view("0123456789.-+eE").find(text[i]) != std::string_view::npos)) {
    // 'e' only counts as part of the number when followed by a digit or sign (so "5e" is junk).
    if ((text[i] == 'e' || text[i] == 'E') &&
        (i + 1 >= text.size() ||
         std::string_view("0123456789+-").find(text[i + 1]) == std::string_view::npos))
      break;
    ++i;
  }
  // "inf"/"nan" are numbers to from_chars; keep them in the number so they are reported as such.
  if (i == 0 && (text.starts_with("inf") || text.starts_with("nan") || text.starts_with("-inf"))) {
    i = text.starts_with("-") ? 4 : 3;
    if (text.substr(0, 8) == "infinity") i = 8;
  }
  std::string_view number = text.substr(0, i);
  std::string_view unit = text.substr(i);
  const auto u = unit.find_first_not_of(" \t");
  unit = u == std::string_view::npos ? std::string_view() : unit.substr(u);
  return {number, unit};
}

double parse_with_units(std::string_view text, const std::string& source, const std::string& location,
                        const std::string& expected, double (*scale_of)(std::string_view unit),
                        double bare_scale) {
  const auto [number, unit] = split_unit(text);
  double v = 0;
  if (!parse_real(number, v))
    throw core::InputError(source, location, "expected " + expected + ", got " + quoted(text));
  if (!std::isfinite(v))
    throw core::InputError(source, location,
                           "expected " + expected + ", got " + quoted(text) + " (not finite)");
  if (v < 0)
    throw core::InputError(source, location,
                           "expected " + expected + ", got " + quoted(text) + " (negative)");
  double scale = bare_scale;
  if (!unit.empty()) {
    scale = scale_of(unit);
    if (scale <= 0)
      throw core::InputError(source, location,
                             "expected " + expected + ", got " + quoted(text) + ": unknown unit " +
                                 quoted(unit) +
                                 (scale < 0 ? " (byte units are not accepted: write bits, e.g. Mb/s)" : ""));
  }
  const double result = v * scale;
  if (!std::isfinite(result))
    throw core::InputError(source, location,
                           "expected " + expected + ", got " + quoted(text) + ": out of range");
  return result;
}

double duration_scale(std::string_view unit) {
  if (unit == "ms") return 1e-3;
  if (unit == "s" || unit == "sec") return 1;
  if (unit == "min") return 60;
  if (unit == "h") return 3600;
  if (unit == "d") return 86400;
  return 0;
}

double bandwidth_scale(std::string_view unit) {
  double prefix = 1;
  if (!unit.empty()) {
    switch (unit.front()) {
      case 'k':
      case 'K':
        prefix = 1e3;
        unit.remove_prefix(1);
        break;
      case 'M':
        prefix = 1e6;
        unit.remove_prefix(1);
        break;
      case 'G':
        prefix = 1e9;
        unit.remove_prefix(1);
        break;
      case 'T':
        prefix = 1e12;
        unit.remove_prefix(1);
        break;
      default: break;
    }
  }
  if (unit == "bps" || unit == "b/s" || unit == "bit/s") return prefix;
  if (unit == "Bps" || unit == "B/s" || unit == "byte/s") return -1;
  return 0;
}

}  // namespace

double parse_duration(std::string_view text, const std::string& source, const std::string& location,
                      double bare_unit_s) {
  return parse_with_units(
      text, source, location,
      "a non-negative duration (a number, or a number with a unit: " + std::string(kDurationUnits) + ")",
      duration_scale, bare_unit_s);
}

double parse_bandwidth(std::string_view text, const std::string& source, const std::string& location) {
  return parse_with_units(
      text, source, location,
      "a non-negative bandwidth (bits/s, or a number with a unit: " + std::string(kBandwidthUnits) + ")",
      bandwidth_scale, 1.0);
}

std::string format_duration(double seconds) {
  struct Unit {
    const char* name;
    double s;
  };
  static constexpr Unit units[] = {{"h", 3600}, {"min", 60}, {"s", 1}, {"ms", 1e-3}};
  if (seconds > 0)
    for (const auto& u : units) {
      const double n = seconds / u.s;
      if (n >= 1 && n == std::floor(n) && n * u.s == seconds) return format_real(n) + u.name;
    }
  return format_real(seconds) + "s";
}

}  // namespace swarmlab::traces
