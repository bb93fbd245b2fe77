#pragma once
// Strict validators for numeric command-line values. CLI11's own conversions accept what they
// should not: "-1" for an unsigned option wraps around to 2^64 - 1, "0x10" and "010" are read as
// hex and octal, a number past 2^64 saturates, and NaN passes every range check (every comparison
// with it is false). These read the text themselves: plain decimal digits for counts, a finite
// decimal number for reals, within the option's documented range (scenarios/README.md, "Limits").
// A failure reads "--option: expected ..., got TEXT" and exits with code 2.
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "sim/experiments/run_cost.h"
#include "traces/text.h"

namespace swarmlab::cli {

// An integer in [min, max], written in plain decimal digits.
inline CLI::Validator Count(std::uint64_t min, std::uint64_t max, std::string what = "an integer") {
  const std::string expected = "expected " + what + " from " + std::to_string(min) + " to " + std::to_string(max) +
                               " (decimal digits)";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (!digits || ec != std::errc() || ptr != end || v < min || v > max)
          return expected + ", got " + traces::quoted(text);
        return {};
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

// A finite decimal number in [min, max] (or (min, max] when `open_min`).
inline CLI::Validator Real(double min, double max, std::string what = "a number", bool open_min = false) {
  const std::string expected = "expected " + what + " " + (open_min ? "above " : "from ") + traces::format_plain(min) +
                               (open_min ? " and at most " : " to ") + traces::format_plain(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!traces::parse_real(text, v) || !std::isfinite(v) || v < min || v > max || (open_min && v == min))
          return expected + ", got " + traces::quoted(text);
        return {};
      },
      std::string("NUMBER in ") + (open_min ? "(" : "[") + traces::format_plain(min) + ", " + traces::format_plain(max) +
          "]");
}

// A finite number above 0 and at most `max`.
inline CLI::Validator Positive(double max, std::string what = "a number") { return Real(0, max, std::move(what), true); }

// A seed: decimal digits, 0 to 2^64 - 1 ("-1" would otherwise wrap around to 2^64 - 1).
inline CLI::Validator Seed() { return Count(0, UINT64_MAX, "a seed"); }

// --max-events and --max-memory-gib: the budget a run's up-front cost estimate must fit
// (sim/experiments/run_cost.h).
inline void add_budget_options(CLI::App& sub, sim::RunBudget& budget) {
  sub.add_option("--max-events", budget.max_events,
                 "refuse runs estimated at more simulated events than this (a run past the default takes minutes)")
      ->check(Positive(1e15, "a number of events"))
      ->capture_default_str();
  sub.add_option("--max-memory-gib", budget.max_memory_gib, "refuse runs estimated to need more memory than this")
      ->check(Positive(1e6, "a number of GiB"))
      ->capture_default_str();
}

// The output folder `dir` (given as `option`), created, checked to be a writable folder before
// any work is done: "--out /dev/null" is refused at once, not after the run.
inline std::filesystem::path prepare_out_dir(const std::filesystem::path& dir, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!ec && fs::exists(st) && !fs::is_directory(st))
    throw core::InputError("command line", option,
                           "expected a folder for the output files, got " + traces::quoted(dir.string()) +
                               ", which exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir) || ::access(dir.c_str(), W_OK | X_OK) != 0)
    throw core::InputError("command line", option,
                           "expected a folder the output files can be written to, got " + traces::quoted(dir.string()) +
                               (ec ? " (" + ec.message() + ")" : std::string(" (not writable)")));
  return dir;
}

// The folder a command writes to: --out if given, else out/<scenario name> (names follow the
// peer-name rule, so this stays under out/).
inline std::filesystem::path out_dir_for(const std::string& out_arg, const std::string& scenario_name) {
  return prepare_out_dir(out_arg.empty() ? std::filesystem::path("out") / scenario_name : std::filesystem::path(out_arg),
                         "--out");
}

// Writes `j` to `path`, failing loudly (exit 1) if it cannot.
inline void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& j) {
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace swarmlab::cli
