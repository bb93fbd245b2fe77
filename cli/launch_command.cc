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
#include "cli/python_script.h"
#include "core/input_limits.h"
#include "scenarios/applicability.h"
#include "scenarios/dmoe_live.h"
#include "scenarios/scenario_loader.h"
#include "exec/dmoe_launch.h"
#include "exec/launcher.h"
#include "exec/link_emulator.h"
#include "exec/live_scenario.h"
#include "learn/fashion_mnist.h"
#include "traces/text.h"

namespace swarmlab::cli {
namespace {

constexpr int kExitInterrupted = 130;

struct LaunchArgs {
  exec::LaunchOptions o;
  exec::TrainLaunch train;
  bool training = false;
  std::vector<std::string> joins, kills;
  std::string strategy, codec;
  std::uint64_t parameters = 0;
  double restart = -1;
  bool silent = false;
  double chaos_s = 0;
  exec::RandomChurnSpec churn;
  std::string chaos_gap;
  bool json = false, quiet = false;
  bool auth = false;
  double auth_ttl = 24 * 3600;
};

// Plain decimal digits below 2^32 (no sign, so "-1" does not wrap around).
bool parse_index(const std::string& t, std::uint64_t& v) {
  if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stoull(t);
  return true;
}

// PEER@SECONDS (a join, or a kill the launcher sends).
exec::TimedPeerEvent parse_timed(const std::string& text, const std::string& option, std::size_t peers) {
  const auto at = text.find('@');
  std::uint64_t peer = 0;
  double t = 0;
  if (at == std::string::npos || !parse_index(text.substr(0, at), peer) || !traces::parse_real(text.substr(at + 1), t) ||
      !(t >= 0 && t <= core::limits::kMaxSeconds))
    throw core::InputError("command line", option, "expected PEER@SECONDS (e.g. 3@20), got " + traces::quoted(text));
  if (peer >= peers)
    throw core::InputError("command line", option,
                           "expected a peer index below " + std::to_string(peers) + " (the scenario's peers), got " +
                               std::to_string(peer));
  return {static_cast<core::PeerId>(peer), t};
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

void print_training(const exec::LaunchResult& r) {
  const exec::TrainingSummary& t = *r.training;
  std::cout << r.scenario << " live training: " << r.strategy << ", " << r.codec << " wire, "
            << (r.emulated_links ? "emulated links" : "loopback") << "\n";
  std::cout << "  step   time_s  members  samples     loss  test_acc  consistent\n";
  for (const auto& x : t.steps) {
    if (!x.test_accuracy && x.step != t.last_step && x.step % 10 != 0 && x.step > 3) continue;
    std::cout << std::setw(6) << x.step << std::setw(9) << std::fixed << std::setprecision(2) << x.time_s << std::setw(9)
              << x.members << std::setw(9) << x.samples << std::setw(9) << std::setprecision(4) << x.loss.value_or(0.0)
              << std::setw(10) << (x.test_accuracy ? (std::ostringstream() << std::fixed << std::setprecision(4) << *x.test_accuracy).str() : "-")
              << std::setw(12) << (x.consistent ? "yes" : "NO") << "\n";
  }
  std::cout << std::fixed << std::setprecision(1) << "steps/hour " << t.steps_per_hour();
  if (t.final_test_accuracy) std::cout << std::setprecision(4) << "; final test accuracy " << *t.final_test_accuracy;
  std::cout << "; " << (r.ok ? "ok" : "FAILED") << "; results in " << r.out_dir << "/results.json and metrics.csv\n";
}

// A live Learning@home scenario ({"dmoe": ...}): expert runtimes and trainers (exec/dmoe_launch.h).
int launch_dmoe_run(const LaunchArgs& a, const std::string& text) {
  const std::string& path = a.o.scenario_path;
  exec::DmoeLaunchOptions o;
  o.scenario = scenarios::load_dmoe_live(text, path);
  if (a.training || a.chaos_s > 0 || a.o.emulate_links || a.auth || !a.joins.empty())
    throw core::InputError("command line", "launch", path + " is a DMoE run: --train, --chaos, --join, --emulate-links and --auth "
                                                     "are for collaborations (its processes always train)");
  for (const std::string& k : a.kills) {
    const exec::TimedPeerEvent e = parse_timed(k, "--kill", o.scenario.peers());
    if (e.peer >= o.scenario.runtimes)
      throw core::InputError("command line", "--kill", "expected an expert runtime (peers 0-" + std::to_string(o.scenario.runtimes - 1) +
                                                           ") of this DMoE run, got peer " + std::to_string(e.peer));
    o.kills.emplace_back(e.peer, e.at_s);
  }
  o.out_dir = a.o.out_dir.empty() ? "out/" + o.scenario.name + "-live" : a.o.out_dir;
  o.data_dir = a.train.data_dir;
  const std::string data = o.data_dir.empty() ? learn::kFashionMnistDir : o.data_dir;
  learn::load_fashion_mnist(learn::Split::Train, data);
  learn::load_fashion_mnist(learn::Split::Test, data);
  if (a.o.deadline_s != exec::LaunchOptions{}.deadline_s) o.deadline_s = a.o.deadline_s;
  if (!a.quiet) o.progress = [](const std::string& line) { std::cerr << "launch: " << line << "\n"; };
  const exec::DmoeLaunchResult r = exec::launch_dmoe(o);
  if (a.json) {
    std::cout << r.results_json << "\n";
  } else {
    std::cout << o.scenario.name << " live DMoE: " << o.scenario.runtimes << " expert runtimes, " << o.scenario.trainers << " trainers, "
              << (o.scenario.dense ? "dense baseline" : "DMoE layers") << ", mean delay " << o.scenario.delay_s * 1000 << " ms\n"
              << std::fixed << std::setprecision(1) << "  batches " << r.batches << " (" << r.dropped << " dropped), "
              << r.samples_per_s << " samples/s; expert calls failed " << r.failed_calls << "; experts taken over "
              << r.taken_over << " (fresh " << r.restarted_fresh << ")\n  final test accuracy "
              << (r.final_test_accuracy ? (std::ostringstream() << std::setprecision(4) << *r.final_test_accuracy).str() : "-")
              << "; " << (r.ok ? "ok" : "FAILED") << "; results in " << r.out_dir << "/results.json, batches.csv, evals.csv\n";
  }
  if (r.interrupted) return kExitInterrupted;
  return r.ok ? kExitOk : kExitFailure;
}

const bool launch_registered = register_command(
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
      sub.add_flag("--nat", a->o.nat_clients, "with --emulate-links: each client-mode peer behind its own NAT router (nftables masquerade), "
                                             "so it really cannot accept connections, only dial out");
      sub.add_option("--scale", a->o.scale, "multiply every link rate by this (machines that cannot carry the real rates)")->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--goodput", a->o.goodput, "announced bandwidth = link rate × this (default: the transport's measured goodput)")
          ->check(Positive(1, "a fraction of the link rate"));
      sub.add_option("--kill", a->kills, "PEER@ROUND+SECONDS: that peer SIGKILLs itself that long into that averaging round; "
                                         "PEER@SECONDS: the launcher SIGKILLs it then (repeatable)");
      sub.add_flag("--silent", a->silent, "with --kill PEER@ROUND+SECONDS: the peer stops (SIGSTOP) instead of dying; its connections stay "
                                          "open and the others notice only by their timeouts (a silent departure)");
      sub.add_option("--join", a->joins, "PEER@SECONDS: start that peer then instead of at once; it joins the running collaboration (repeatable)");
      sub.add_flag("--train", a->training, "train a model on Fashion-MNIST (libtorch; peer 0 is the backbone) instead of averaging rounds");
      sub.add_option("--model", a->train.model, "--train: the model")->check(CLI::IsMember({"linear", "cnn", "mlp"}))->capture_default_str();
      sub.add_option("--steps", a->train.steps, "--train: global steps to reach")->check(Count(1, 10000000, "a number of steps"))->capture_default_str();
      sub.add_option("--order", a->train.order, "--train: shards or fixed (sample order)")->check(CLI::IsMember({"shards", "fixed"}))->capture_default_str();
      sub.add_option("--target-batch", a->train.target_batch, "--train: samples per global step (default: the scenario's)")->check(Count(1, 100000000, "a number of samples"));
      sub.add_option("--micro-batch", a->train.micro_batch, "--train: samples per compute call (default: the scenario's)")->check(Count(1, 1000000, "a number of samples"));
      sub.add_option("--dpu", a->train.dpu, "--train: delayed parameter updates on or off (default: the scenario's)")->check(CLI::IsMember({"on", "off"}));
      sub.add_option("--lr", a->train.lr, "--train: learning rate")->check(Positive(100, "a learning rate"))->capture_default_str();
      sub.add_option("--evaluate-every", a->train.evaluate_every, "--train: the backbone's test accuracy every this many steps (0: never)")->check(Count(0, 10000000, "a number of steps"))->capture_default_str();
      sub.add_option("--eval-samples", a->train.eval_samples, "--train: test images per evaluation during the run (0: all; the final one uses all)")->check(Count(0, 1000000, "a number of images"))->capture_default_str();
      sub.add_option("--kept-updates", a->train.kept_updates, "--train: steps whose averaged vector each peer keeps for peers holding an older state (default 4)")->check(Count(0, 1000000, "a number of steps"));
      sub.add_option("--checkpoint-every", a->train.checkpoint_every, "--train: the backbone writes its state to <out>/checkpoints every this many steps")->check(Count(0, 10000000, "a number of steps"));
      sub.add_flag("--dump-parameters", a->train.dump_parameters, "--train: every peer writes its parameters after every step to <out>/parameters");
      sub.add_option("--data", a->train.data_dir, "--train: the Fashion-MNIST directory (default: Debian's)");
      sub.add_option("--bootstrap", a->o.bootstrap_peers, "give each peer only the first K peers' addresses (and its own); it learns the "
                                                        "others' through them (default 0: everyone's; --chaos: --backbones)")
          ->check(Count(0, 100000, "a number of peers"));
      sub.add_option("--chaos", a->chaos_s, "--train: random churn for this many seconds (a random peer SIGKILLed or started again every "
                                            "--chaos-gap seconds), then --calm seconds, then every peer leaves after its next step")
          ->check(Positive(limits::kMaxSeconds, "a number of seconds"));
      sub.add_option("--chaos-gap", a->chaos_gap, "--chaos: MIN:MAX seconds between churn events (default 2:10)");
      sub.add_option("--chaos-seed", a->churn.seed, "--chaos: seed of the churn's choices")->capture_default_str();
      sub.add_option("--calm", a->churn.calm_s, "--chaos: seconds without churn before the end")->check(Count(0, 3600, "a number of seconds"))->capture_default_str();
      sub.add_option("--backbones", a->churn.backbones, "--chaos: the first this many peers are backbones; one of them is always up")
          ->check(Count(1, 10000, "a number of peers"))->capture_default_str();
      sub.add_option("--compute-scale", a->train.compute_scale, "--train: each peer computes at its scenario compute_sps x this")->check(Positive(1000, "a scale factor"))->capture_default_str();
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
      sub.add_flag("--auth", a->auth, "allowlist authentication: the launcher is the authority, every message is signed and checked "
                                      "(docs/trust.md; files in <out>/auth)");
      sub.add_option("--auth-ttl", a->auth_ttl, "--auth: seconds the tokens are valid")->check(Positive(1e8, "a number of seconds"))->capture_default_str();
      sub.add_flag("--json", a->json, "print results.json instead of the table");
      sub.add_flag("--quiet", a->quiet, "no progress lines");
      return [a] {
        exec::LaunchOptions o = a->o;
        const std::string text = traces::read_text_file(o.scenario_path, core::limits::kMaxScenarioFileBytes);
        if (scenarios::is_dmoe_live(text)) return launch_dmoe_run(*a, text);
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
        for (const std::string& k : a->kills) {
          if (k.find('+') != std::string::npos) {
            if (o.kill) throw core::InputError("command line", "--kill", "expected one PEER@ROUND+SECONDS at most");
            o.kill = parse_kill(k, a->restart, sc.peers.size());
            o.kill->silent = a->silent;
          } else {
            o.timed_kills.push_back(parse_timed(k, "--kill", sc.peers.size()));
          }
        }
        if (a->silent && !o.kill)
          throw core::InputError("command line", "--silent", "expected a --kill PEER@ROUND+SECONDS to make silent");
        o.timed_restart_after_s = a->restart;
        for (const std::string& j : a->joins) o.joins.push_back(parse_timed(j, "--join", sc.peers.size()));
        if (a->auth) o.auth = exec::LaunchAuth{a->auth_ttl, std::nullopt};
        if (a->training) {
          o.train = a->train;
          // A dataset every peer would fail on is reported here, once, with the file and the place.
          const std::string data = a->train.data_dir.empty() ? learn::kFashionMnistDir : a->train.data_dir;
          learn::load_fashion_mnist(learn::Split::Train, data);
          learn::load_fashion_mnist(learn::Split::Test, data);
        }
        if (a->chaos_s > 0) {
          if (!o.train) throw core::InputError("command line", "--chaos", "expected --train as well (churn is for training runs)");
          if (a->churn.backbones > sc.peers.size())
            throw core::InputError("command line", "--backbones", "expected at most the scenario's " + std::to_string(sc.peers.size()) + " peers");
          exec::RandomChurnSpec churn = a->churn;
          churn.until_s = churn.from_s + a->chaos_s;
          if (!a->chaos_gap.empty()) {
            const auto colon = a->chaos_gap.find(':');
            if (colon == std::string::npos || !traces::parse_real(a->chaos_gap.substr(0, colon), churn.gap_min_s) ||
                !traces::parse_real(a->chaos_gap.substr(colon + 1), churn.gap_max_s) || !(churn.gap_min_s > 0) ||
                !(churn.gap_max_s >= churn.gap_min_s) || !(churn.gap_max_s <= limits::kMaxSeconds))
              throw core::InputError("command line", "--chaos-gap", "expected MIN:MAX seconds with 0 < MIN <= MAX (e.g. 2:10), got " + traces::quoted(a->chaos_gap));
          }
          o.churn = churn;
          if (o.bootstrap_peers == 0) o.bootstrap_peers = churn.backbones;
        }
        if (o.bootstrap_peers > sc.peers.size())
          throw core::InputError("command line", "--bootstrap", "expected at most the scenario's " + std::to_string(sc.peers.size()) + " peers");
        if (o.train && o.kill)
          throw core::InputError("command line", "--kill", "a training launch kills by time: expected PEER@SECONDS, not PEER@ROUND+SECONDS");
        if (o.nat_clients && !o.emulate_links)
          throw core::InputError("command line", "--nat", "expected --emulate-links as well (the NAT routers are part of the emulated network)");
        if (o.emulate_links)
          if (const std::string why = exec::LinkEmulator::unavailable_reason(); !why.empty()) {
            std::cerr << "swarmlab launch: --emulate-links: " << why << "\n";
            return kExitBadInput;
          }
        if (o.nat_clients)
          if (const std::string why = exec::LinkEmulator::nat_unavailable_reason(); !why.empty()) {
            std::cerr << "swarmlab launch: --nat: " << why << "\n";
            return kExitBadInput;
          }
        if (!a->quiet) o.progress = [](const std::string& line) { std::cerr << "launch: " << line << "\n"; };
        const exec::LaunchResult r = exec::launch(o);
        std::string plot;
        if (r.training && !r.training->steps.empty()) {
          const int rc = run_analysis_script("plot_live_training.py", {r.out_dir + "/loss.png", r.out_dir + "/metrics.csv"});
          plot = rc == 0   ? "plot written to " + r.out_dir + "/loss.png"
                 : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                           : "plot failed: analysis/plot_live_training.py exited with status " + std::to_string(rc);
          if (!a->quiet) std::cerr << "launch: " << plot << "\n";
        }
        if (a->json) {
          std::cout << exec::launch_result_json(r) << "\n";
        } else if (r.training) {
          print_training(r);
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
