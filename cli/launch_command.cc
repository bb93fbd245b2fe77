// swarmlab launch: a local swarm, one peer process per scenario peer, optionally behind emulated
// access links (network namespaces + tc).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <fstream>

#include "cli/checks.h"
#include "cli/command.h"
#include "core/input_limits.h"
#include "scenarios/applicability.h"
#include "scenarios/scenario_loader.h"
#include "exec/launcher.h"
#include "exec/link_emulator.h"
#include "exec/live_scenario.h"

namespace swarmlab::cli {
namespace {

constexpr int kExitInterrupted = 130;

struct LaunchArgs {
  exec::LaunchOptions o;
  std::string strategy, codec, kill;
  std::uint64_t parameters = 0;
  double restart = -1;
  bool json = false, quiet = false;
};

// Plain decimal digits below 2^32 (no sign, so "-1" does not wrap around).
bool parse_index(const std::string& t, std::uint64_t& v) {
  if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stoull(t);
  return true;
}

exec::KillSpec parse_kill(const std::string& text, double restart, std::size_t peers) {
  // PEER@ROUND+SECONDS
  const auto at = text.find('@'), plus = text.find('+');
  exec::KillSpec k;
  std::uint64_t peer = 0, round = 0;
  double after = 0;
  if (at == std::string::npos || plus == std::string::npos || plus < at || !parse_index(text.substr(0, at), peer) ||
      !parse_index(text.substr(at + 1, plus - at - 1), round) || !traces::parse_real(text.substr(plus + 1), after) ||
      !(after >= 0 && after <= core::limits::kMaxSeconds))
    throw core::InputError("command line", "--kill",
                           "expected PEER@ROUND+SECONDS (e.g. 3@1+0.5), got " + traces::quoted(text));
  if (peer >= peers)
    throw core::InputError("command line", "--kill",
                           "expected a peer index below " + std::to_string(peers) + " (the scenario's peers), got " +
                               std::to_string(peer));
  k.peer = static_cast<core::PeerId>(peer);
  k.round = round;
  k.after_s = after;
  k.restart_after_s = restart;
  return k;
}

// The TCP congestion control must be one this kernel offers (else every peer fails on its first
// connection and the reason stays in its log).
void check_congestion(const std::string& name) {
  std::ifstream f("/proc/sys/net/ipv4/tcp_available_congestion_control");
  std::string available, word;
  bool found = false;
  while (f >> word) {
    available += (available.empty() ? "" : ", ") + word;
    found = found || word == name;
  }
  if (!found && !available.empty())
    throw core::InputError("command line", "--congestion",
                           "expected one of this kernel's congestion controls (" + available + ") or '', got " +
                               traces::quoted(name));
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    throw core::InputError("command line", "--congestion", "expected a congestion control name, got " + traces::quoted(name));
}

const bool registered = register_command(
    "launch", "Run a scenario live: one peer process per peer on this machine, over TCP (optionally emulated links)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<LaunchArgs>();
      sub.add_option("scenario", a->o.scenario_path, "scenario JSON file")->required();
      sub.add_option("--strategy", a->strategy, "override the scenario's strategy")->check(CLI::IsMember(core::names_of(core::averaging::kStrategyNames)));
      namespace limits = core::limits;
      sub.add_option("--rounds", a->o.rounds, "averaging rounds (the first is a warm-up)")->check(Count(1, 100000, "a number of rounds"))->capture_default_str();
      sub.add_option("--parameters", a->parameters, "vector length (default: the scenario's)")
          ->check(Count(1, limits::kMaxLiveParameters, "a vector length"));
      sub.add_option("--codec", a->codec, "wire precision (default: the scenario's)")->check(CLI::IsMember(core::names_of(core::codec::kCodecNames)));
      sub.add_flag("--emulate-links", a->o.emulate_links, "each peer in its own network namespace, links shaped with tc (needs root)");
      sub.add_option("--scale", a->o.scale, "multiply every link rate by this (machines that cannot carry the real rates)")->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--goodput", a->o.goodput, "announced bandwidth = link rate × this (default: the transport's measured goodput)")
          ->check(Positive(1, "a fraction of the link rate"));
      sub.add_option("--kill", a->kill, "PEER@ROUND+SECONDS: that peer SIGKILLs itself that long into that round");
      sub.add_option("--restart-after", a->restart, "restart the killed peer with the same identity after this many seconds")
          ->check(Real(0, 3600, "a number of seconds"));
      sub.add_option("--pace-all", a->o.pace_all_bps, "pace every connection at this many bits/s (testing on loopback)")
          ->check(Positive(limits::kMaxBandwidthBps, "a rate in bits/s"));
      sub.add_option("--sender-timeout", a->o.timeouts.max_sender, "upper bound of the peers' adaptive sender timeout")
          ->check(Positive(3600, "a number of seconds"))->capture_default_str();
      sub.add_option("--deadline", a->o.deadline_s, "stop everything after this many seconds")
          ->check(Positive(limits::kMaxSeconds, "a number of seconds"))->capture_default_str();
      sub.add_option("--out", a->o.out_dir, "output folder (default: out/<scenario>-live)");
      sub.add_flag("--trace", a->o.trace, "per-peer JSON-lines timelines");
      sub.add_option("--congestion", a->o.congestion_control, "TCP congestion control of every connection ('' for the system's)")->capture_default_str();
      sub.add_flag("--measure-loopback", a->o.measure_loopback, "afterwards, measure one bulk TCP stream over 127.0.0.1 and print the throughput ratio");
      sub.add_flag("--json", a->json, "print results.json instead of the table");
      sub.add_flag("--quiet", a->quiet, "no progress lines");
      return [a] {
        exec::LaunchOptions o = a->o;
        // Everything a peer would only find out in its log is checked here first (exit 2).
        const scenarios::Scenario sc = scenarios::load_scenario(o.scenario_path);
        scenarios::require_collaboration(sc, "launch");
        if (!a->parameters && sc.workload.parameters > core::limits::kMaxLiveParameters)
          throw core::InputError(sc.source, "workload.parameters",
                                 "a live peer holds its vector in memory: expected at most " +
                                     std::to_string(core::limits::kMaxLiveParameters) + " parameters, got " +
                                     std::to_string(sc.workload.parameters) + " (pass a smaller --parameters)");
        if (!o.congestion_control.empty()) check_congestion(o.congestion_control);
        if (!a->strategy.empty()) o.strategy = *core::parse_name(core::averaging::kStrategyNames, a->strategy);
        if (!a->codec.empty()) o.precision = core::codec::parse_codec(a->codec);
        if (a->parameters) o.parameters = a->parameters;
        if (!a->kill.empty()) o.kill = parse_kill(a->kill, a->restart, sc.peers.size());
        if (o.emulate_links)
          if (const std::string why = exec::LinkEmulator::unavailable_reason(); !why.empty()) {
            std::cerr << "swarmlab launch: --emulate-links: " << why << "\n";
            return kExitBadInput;
          }
        if (!a->quiet) o.progress = [](const std::string& line) { std::cerr << "launch: " << line << "\n"; };
        const exec::LaunchResult r = exec::launch(o);
        if (a->json) {
          std::cout << exec::launch_result_json(r) << "\n";
        } else {
          std::cout << r.scenario << " live: " << r.strategy << ", " << r.parameters << " parameters (" << r.codec << "), "
                    << (r.emulated_links ? "emulated links at scale " + (std::ostringstream() << r.scale).str() +
                                               (r.latency_emulated ? "" : " (no added latency: no netem)")
                                         : std::string("loopback, links not emulated"))
                    << "\n";
          std::cout << "round  members  duration_s  min_fraction  max_error  throughput_MB/s\n";
          for (const auto& x : r.rounds)
            std::cout << std::setw(5) << x.round << std::setw(9) << x.reported << "/" << x.participants << std::setw(11)
                      << std::fixed << std::setprecision(3) << x.duration_s << std::setw(14) << x.min_fraction_averaged
                      << std::setw(11) << std::scientific << std::setprecision(2) << x.max_abs_error << std::fixed
                      << std::setw(17) << std::setprecision(1)
                      << (x.duration_s > 0 ? static_cast<double>(x.bytes_sent) / x.duration_s / 1e6 : 0.0)
                      << (x.dropped_any ? "  (peers dropped)" : "") << "\n";
          std::cout << std::fixed << std::setprecision(3) << "mean round " << r.mean_round_s() << " s"
                    << (r.rounds.size() > 1 ? " (rounds 1.., round 0 is a warm-up)" : "") << "; " << (r.ok ? "ok" : "FAILED")
                    << "; results in " << r.out_dir << "/results.json\n";
          if (r.loopback_limit_Bps > 0) {
            double best = 0;
            for (std::size_t i = r.rounds.size() > 1 ? 1 : 0; i < r.rounds.size(); ++i)
              if (r.rounds[i].duration_s > 0)
                best = std::max(best, static_cast<double>(r.rounds[i].bytes_sent) / r.rounds[i].duration_s);
            double mean_bytes = 0;
            std::size_t k = 0;
            for (std::size_t i = r.rounds.size() > 1 ? 1 : 0; i < r.rounds.size(); ++i, ++k) mean_bytes += static_cast<double>(r.rounds[i].bytes_sent);
            const double mean_tp = k && r.mean_round_s() > 0 ? mean_bytes / static_cast<double>(k) / r.mean_round_s() : 0;
            std::cout << std::fixed << std::setprecision(0) << "loopback limit (one bulk TCP stream): "
                      << r.loopback_limit_Bps / 1e6 << " MB/s; swarm throughput " << mean_tp / 1e6 << " MB/s mean ("
                      << best / 1e6 << " MB/s best round): " << std::setprecision(2) << mean_tp / r.loopback_limit_Bps
                      << " of the limit (" << best / r.loopback_limit_Bps << " best)\n";
          }
        }
        if (r.interrupted) return kExitInterrupted;
        return r.ok ? kExitOk : kExitFailure;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
