// swarmlab trace: make trace files (formats: traces/README.md).
//
//   swarmlab trace onoff --peers a,b,c --on 8h --off 8h --duration 48h [--start-up|--start-down]
//                        [--phase 2h] [-o FILE]
//
// writes a churn CSV in which the listed peers all alternate `on` up and `off` down over
// [0, duration), to stdout or FILE. Durations take units (ms, s, min, h, d; bare numbers are
// seconds). Bad values exit with kExitBadInput.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/input_error.h"
#include "core/input_limits.h"
#include "traces/onoff_generator.h"
#include "traces/text.h"
#include "traces/units.h"

namespace swarmlab::cli {
namespace {

constexpr const char* kSource = "command line";

struct OnOffArgs {
  std::vector<std::string> peers;
  std::string on, off, duration, phase = "0";
  bool start_up = true;
  std::string output;
};

double positive_duration(const std::string& text, const std::string& option) {
  const double v = traces::parse_duration(text, kSource, option);
  if (v <= 0)
    throw core::InputError(kSource, option,
                           "expected a positive duration (e.g. 8h), got " + traces::quoted(text));
  if (v > core::limits::kMaxSeconds)
    throw core::InputError(kSource, option,
                           "expected at most " + traces::format_plain(core::limits::kMaxSeconds) +
                               " s (the limit on any time or duration), got " + traces::quoted(text));
  return v;
}

// Splits every --peers argument at commas, keeping empty names so that they are reported.
std::vector<std::string> split_peers(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const auto& arg : args) {
    std::size_t start = 0;
    while (true) {
      const auto comma = arg.find(',', start);
      names.push_back(arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return names;
}

int run_onoff(const OnOffArgs& args) {
  OnOffArgs a = args;
  a.peers = split_peers(args.peers);
  if (a.peers.empty()) throw core::InputError(kSource, "--peers", "expected at least one peer name");
  traces::PeerNames seen;
  for (const auto& p : a.peers) {
    if (!traces::is_valid_peer_name(p))
      throw core::InputError(kSource, "--peers",
                             "expected comma-separated peer names of " + std::string(traces::kPeerNameRule) +
                                 ", got " + (p.empty() ? std::string("an empty name") : traces::quoted(p)));
    if (!seen.insert(p).second)
      throw core::InputError(kSource, "--peers",
                             "expected distinct names, got " + traces::quoted(p) + " twice");
  }
  const double on = positive_duration(a.on, "--on");
  const double off = positive_duration(a.off, "--off");
  const double duration = positive_duration(a.duration, "--duration");
  const double phase = traces::parse_duration(a.phase, kSource, "--phase");
  if (phase > core::limits::kMaxSeconds)
    throw core::InputError(kSource, "--phase",
                           "expected at most " + traces::format_plain(core::limits::kMaxSeconds) +
                               " s (the limit on any time or duration), got " + traces::quoted(a.phase));
  // Rows the trace would hold: one per peer at 0 and at every transition before the end.
  const double rows = static_cast<double>(a.peers.size()) * (2 * std::ceil((duration + on + off) / (on + off)) + 1);
  if (rows > static_cast<double>(traces::kMaxOnOffEvents))
    throw core::InputError(kSource, "--duration",
                           "a trace of about " + traces::format_plain(std::round(rows)) + " rows (" +
                               std::to_string(a.peers.size()) + " peers, a transition every " +
                               traces::format_duration(std::min(on, off)) + " or so): expected at most " +
                               std::to_string(traces::kMaxOnOffEvents) + " rows, the limit on a trace file");
  const auto trace = traces::make_on_off(a.peers, on, off, duration, a.start_up, phase);

  std::string peers;
  for (const auto& p : a.peers) peers += (peers.empty() ? "" : ",") + p;
  std::string csv =
      "# On/off churn trace: " + std::to_string(a.peers.size()) + (a.peers.size() == 1 ? " peer" : " peers") +
      " alternating " + traces::format_duration(on) + " up and " + traces::format_duration(off) +
      " down over [0, " + traces::format_duration(duration) + ").\n# Made by: swarmlab trace onoff --peers " +
      peers + " --on " + traces::format_duration(on) + " --off " + traces::format_duration(off) +
      " --duration " + traces::format_duration(duration) + (a.start_up ? " --start-up" : " --start-down") +
      " --phase " + traces::format_duration(phase) + "\n" + traces::to_csv(trace);
  if (a.output.empty() || a.output == "-") {
    std::cout << csv;
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("cannot write the trace to stdout");
    return kExitOk;
  }
  std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
  out << csv;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + a.output);
  return kExitOk;
}

const bool trace_registered = register_command(
    "trace", "Make trace files (churn CSV; see traces/README.md)", [](CLI::App& sub) -> std::function<int()> {
      sub.require_subcommand(1);
      auto args = std::make_shared<OnOffArgs>();
      CLI::App* onoff = sub.add_subcommand("onoff", "Churn trace: peers alternating on and off, all in step");
      onoff->add_option("--peers", args->peers, "peer names, comma-separated (or space-separated)")
          ->required();
      onoff->add_option("--on", args->on, "time up per cycle, e.g. 8h (units ms, s, min, h, d)")->required();
      onoff->add_option("--off", args->off, "time down per cycle, e.g. 8h")->required();
      onoff->add_option("--duration", args->duration, "length of the trace, e.g. 48h")->required();
      onoff->add_flag("--start-up,!--start-down", args->start_up,
                      "whether the cycle starts with the up part (default) or the down part");
      onoff->add_option("--phase", args->phase, "how far into the cycle time 0 falls, e.g. 2h (default 0)");
      onoff->add_option("-o,--output", args->output, "output file (default: stdout)");
      return [args, onoff]() -> int {
        if (onoff->parsed()) return run_onoff(*args);
        return kExitBadInput;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
