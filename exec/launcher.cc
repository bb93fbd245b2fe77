#include "exec/launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "exec/bulk_stream.h"
#include "exec/child_processes.h"
#include "exec/event_loop.h"
#include "exec/link_emulator.h"
#include "exec/live_scenario.h"
#include "exec/socket_address.h"
#include "scenarios/nat_traversal.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::exec {
namespace {

constexpr std::uint16_t kEmulatedPort = 7000;
constexpr std::uint16_t kPunchPort = 7001;  // where a peer behind a cone NAT punches from

void add_training_arguments(std::vector<std::string>& argv, const TrainLaunch& t, double compute_sps, std::size_t peer,
                            const std::string& out_dir) {
  argv.insert(argv.end(), {"--train", "--model", t.model, "--steps", std::to_string(t.steps), "--order", t.order,
                           "--lr", exact_decimal(t.lr), "--compute-cap", exact_decimal(compute_sps * t.compute_scale), "--threads", "1"});
  if (t.target_batch) argv.insert(argv.end(), {"--target-batch", std::to_string(t.target_batch)});
  if (t.micro_batch) argv.insert(argv.end(), {"--micro-batch", std::to_string(t.micro_batch)});
  if (!t.dpu.empty()) argv.insert(argv.end(), {"--dpu", t.dpu});
  if (!t.data_dir.empty()) argv.insert(argv.end(), {"--data", t.data_dir});
  if (t.kept_updates >= 0) argv.insert(argv.end(), {"--kept-updates", std::to_string(t.kept_updates)});
  if (t.dump_parameters) argv.insert(argv.end(), {"--dump-parameters", out_dir + "/parameters"});
  if (peer == 0 && t.evaluate_every > 0)
    argv.insert(argv.end(), {"--evaluate-every", std::to_string(t.evaluate_every), "--eval-samples", std::to_string(t.eval_samples)});
  if (peer == 0 && t.checkpoint_every > 0)
    argv.insert(argv.end(), {"--checkpoint-dir", out_dir + "/checkpoints", "--checkpoint-every", std::to_string(t.checkpoint_every)});
}

// The highest global step any peer's JSON lines report so far.
std::uint64_t highest_step(const std::vector<std::string>& out_paths) {
  std::uint64_t highest = 0;
  for (const auto& path : out_paths) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("step") && j["step"].is_number_unsigned()) highest = std::max(highest, j["step"].get<std::uint64_t>());
    }
  }
  return highest;
}

void collect(LaunchResult& result, const std::vector<std::string>& out_paths, std::uint64_t rounds) {
  std::map<std::uint64_t, LaunchRound> by_round;
  for (const auto& path : out_paths) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("round")) continue;
      const std::uint64_t r = j.value("round", std::uint64_t{0});
      LaunchRound& lr = by_round[r];
      const bool first = lr.reported == 0;
      lr.round = r;
      lr.participants = std::max<std::size_t>(lr.participants, j.value("participants", std::size_t{0}));
      ++lr.reported;
      if (!j.value("completed", false)) ++lr.incomplete;
      const double start = j.value("start_s", 0.0), end = j.value("end_s", 0.0);
      lr.start_s = first ? start : std::min(lr.start_s, start);
      lr.end_s = first ? end : std::max(lr.end_s, end);
      if (j.value("sends", false)) {
        lr.min_fraction_averaged = std::min(lr.min_fraction_averaged, j.value("fraction_averaged", 0.0));
        lr.max_abs_error = std::max(lr.max_abs_error, j.value("max_abs_error", 0.0));
      }
      lr.values_ok = lr.values_ok && j.value("values_ok", false);
      lr.dropped_any = lr.dropped_any || !j.value("dropped_senders", nlohmann::json::array()).empty() ||
                       !j.value("dropped_reducers", nlohmann::json::array()).empty();
      lr.bytes_sent += j.value("bytes_sent", std::uint64_t{0});
    }
  }
  for (auto& [r, lr] : by_round) {
    lr.duration_s = lr.end_s - lr.start_s;
    // After a drop there is no exact average to match (docs/dedloc.md §4 failure semantics).
    if (lr.dropped_any) lr.values_ok = true;
    if (r < rounds) result.rounds.push_back(lr);
  }
}

}  // namespace

double LaunchResult::mean_round_s() const {
  if (rounds.empty()) return 0;
  const std::size_t first = rounds.size() > 1 ? 1 : 0;
  double sum = 0;
  for (std::size_t i = first; i < rounds.size(); ++i) sum += rounds[i].duration_s;
  return sum / static_cast<double>(rounds.size() - first);
}

LaunchResult launch(const LaunchOptions& o) {
  if (o.rounds == 0) throw std::invalid_argument("rounds must be >= 1");
  const scenarios::Scenario sc = scenarios::load_scenario(o.scenario_path);
  const std::size_t n = sc.peers.size();
  if (o.kill && o.kill->peer >= n) throw std::invalid_argument("--kill: the scenario has no peer " + std::to_string(o.kill->peer));
  for (const auto& e : o.joins)
    if (e.peer >= n) throw std::invalid_argument("--join: the scenario has no peer " + std::to_string(e.peer));
  for (const auto& e : o.timed_kills)
    if (e.peer >= n) throw std::invalid_argument("--kill: the scenario has no peer " + std::to_string(e.peer));
  if (o.nat_clients && !o.emulate_links)
    throw std::invalid_argument("--nat: needs --emulate-links (the NAT routers are built in the emulated network)");
  check_live_nat_traversal(sc, o.emulate_links && o.nat_clients);
  // NAT types as the simulator draws them (scenarios/nat_traversal.h): cone routers keep a
  // connection's source port, symmetric ones pick a new one per connection.
  std::vector<core::relay::Nat> nat_types(n, core::relay::Nat::Cone);
  if (sc.nat_traversal) nat_types = scenarios::reachability_config(sc).nat;
  const bool punching = sc.nat_traversal && sc.nat_traversal->hole_punching;
  std::optional<RandomChurn> churn;
  if (o.churn) {
    if (!o.train) throw std::invalid_argument("--chaos: only for --train runs");
    if (o.churn->backbones > n) throw std::invalid_argument("--backbones: the scenario has only " + std::to_string(n) + " peers");
    churn.emplace(*o.churn);
  }
  const double goodput = o.goodput > 0 ? o.goodput : kLiveGoodputFraction;
  const core::averaging::Strategy strategy = o.strategy.value_or(sc.averaging.strategy);

  LaunchResult result;
  result.scenario = sc.name;
  result.strategy = std::string(core::averaging::label(strategy));
  result.scale = o.scale;
  result.goodput = goodput;
  result.emulated_links = o.emulate_links;
  result.pacing = o.pacing.value_or(o.emulate_links);
  result.out_dir = o.out_dir.empty() ? "out/" + sc.name + "-live" : o.out_dir;
  const std::string executable = o.executable.empty() ? self_executable() : o.executable;
  std::filesystem::create_directories(result.out_dir);
  const std::string abs_scenario = std::filesystem::absolute(o.scenario_path).string();
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };

  SignalScope signals;  // before anything needs tearing down: a Ctrl-C from here on is handled
  std::unique_ptr<LinkEmulator> emulator;
  std::vector<std::optional<SocketAddress>> addresses(n);
  std::string punch_list;  // --punch for every peer
  if (o.emulate_links) {
    if (const std::string why = LinkEmulator::unavailable_reason(); !why.empty()) throw std::runtime_error(why);
    if (const std::size_t stale = LinkEmulator::cleanup_stale(); stale > 0)
      say("removed " + std::to_string(stale) + " network objects left by an earlier launch");
    const scenarios::Scenario scaled = live_view(sc, LiveOverrides{o.scale, {}, {}, false});
    std::vector<EmulatedLink> links;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& p = scaled.peers[i];
      const bool nat = o.nat_clients && sc.peers[i].reachability == scenarios::Reachability::Client;
      links.push_back({p.upload_bps, p.download_bps, p.latency_s, nat, nat && nat_types[i] == core::relay::Nat::Symmetric});
      result.peers_behind_nat += nat;
    }
    if (o.nat_clients && result.peers_behind_nat == 0) say("note: --nat: the scenario has no client-mode peer to put behind NAT");
    if (result.peers_behind_nat > 0)
      if (const std::string why = LinkEmulator::nat_unavailable_reason(); !why.empty()) throw std::runtime_error("--nat: " + why);
    say("building " + std::to_string(n) + " emulated links (scale " + exact_decimal(o.scale) + ")" +
        (result.peers_behind_nat > 0 ? ", " + std::to_string(result.peers_behind_nat) + " client-mode peers behind NAT" : ""));
    emulator = std::make_unique<LinkEmulator>(links, "swl" + std::to_string(getpid()));
    result.latency_emulated = emulator->latency_emulated();
    bool any_latency = false;
    for (const auto& p : scaled.peers) any_latency |= p.latency_s > 0;
    if (any_latency && !result.latency_emulated)
      say("note: this kernel has no netem qdisc; the emulated links add no latency");
    // Client-mode peers get no address (they bind nothing and only dial), behind NAT or not.
    for (std::size_t i = 0; i < n; ++i)
      if (sc.peers[i].reachability == scenarios::Reachability::Public)
        addresses[i] = SocketAddress{emulator->address(i), kEmulatedPort};
    // The rendezvous: where each peer behind a cone NAT punches from, its router's address and
    // the port it binds (which the router keeps).
    if (punching)
      for (std::size_t i = 0; i < n; ++i)
        if (emulator->behind_nat(i) && nat_types[i] == core::relay::Nat::Cone) {
          if (!punch_list.empty()) punch_list += ',';
          punch_list += std::to_string(i) + '=' + SocketAddress{emulator->address(i), kPunchPort}.to_string();
        }
  } else {
    const auto ports = reserve_loopback_ports(n);
    for (std::size_t i = 0; i < n; ++i)
      if (sc.peers[i].reachability == scenarios::Reachability::Public) addresses[i] = SocketAddress::loopback(ports[i]);
  }
  const scenarios::Scenario live =
      live_view(sc, LiveOverrides{o.scale, o.parameters, o.precision, !result.latency_emulated});
  result.parameters = live.workload.parameters;
  result.codec = std::string(core::codec::name(live.workload.wire_precision));

  // Each peer's address book: everyone's, or (bootstrap_peers > 0) the bootstrap peers' and its own,
  // the rest learned live (exec/address_directory.h).
  if (o.bootstrap_peers > n) throw std::invalid_argument("--bootstrap: the scenario has only " + std::to_string(n) + " peers");
  auto peer_list_for = [&](std::size_t self) {
    std::string list;
    for (std::size_t i = 0; i < n; ++i)
      if (addresses[i] && (o.bootstrap_peers == 0 || i < o.bootstrap_peers || i == self)) {
        if (!list.empty()) list += ',';
        list += std::to_string(i);
        list += '=';
        list += addresses[i]->to_string();
      }
    return list;
  };
  const std::uint64_t run_id = static_cast<std::uint64_t>(getpid()) << 32 ^
                               static_cast<std::uint64_t>(EventLoop::monotonic_seconds() * 1e6);
  const double origin = EventLoop::monotonic_seconds();

  std::vector<std::string> out_paths, log_paths;
  for (std::size_t i = 0; i < n; ++i) {
    out_paths.push_back(result.out_dir + "/peer-" + std::to_string(i) + ".jsonl");
    log_paths.push_back(result.out_dir + "/peer-" + std::to_string(i) + ".log");
    std::filesystem::remove(out_paths.back());
    std::filesystem::remove(log_paths.back());
    std::filesystem::remove(result.out_dir + "/trace-" + std::to_string(i) + ".jsonl");
  }
  if (o.train) {
    std::filesystem::remove_all(result.out_dir + "/parameters");
    std::filesystem::remove_all(result.out_dir + "/checkpoints");
  }
  std::optional<LaunchAuthority> authority;
  if (o.auth) authority.emplace(*o.auth, n, result.out_dir + "/auth");
  auto plan_for = [&](std::size_t i, int incarnation) {
    SpawnPlan p;
    p.executable = executable;
    p.argv = {executable, "peer", abs_scenario, "--id", std::to_string(i), "--peers", peer_list_for(i),
              "--strategy", std::string(core::averaging::name(strategy)), "--rounds", std::to_string(o.rounds),
              "--scale", exact_decimal(o.scale), "--goodput", exact_decimal(goodput),
              "--parameters", std::to_string(live.workload.parameters), "--codec", result.codec,
              "--run-id", std::to_string(run_id), "--clock-origin", exact_decimal(origin),
              "--connect-timeout", exact_decimal(o.connect_timeout_s), "--sender-timeout", exact_decimal(o.timeouts.max_sender)};
    if (std::isfinite(o.timeouts.max_round)) p.argv.insert(p.argv.end(), {"--round-timeout", exact_decimal(o.timeouts.max_round)});
    if (o.bootstrap_peers > 0) p.argv.push_back("--discover");
    if (!punch_list.empty()) p.argv.insert(p.argv.end(), {"--punch", punch_list});
    if (!result.pacing) p.argv.push_back("--no-pacing");
    if (o.pace_all_bps > 0) p.argv.insert(p.argv.end(), {"--pace-all", exact_decimal(o.pace_all_bps)});
    if (o.kill && o.kill->peer == i && incarnation == 0)
    {
      p.argv.insert(p.argv.end(), {"--die-at", std::to_string(o.kill->round) + "+" + exact_decimal(o.kill->after_s)});
      if (o.kill->silent) p.argv.push_back("--die-silently");
    }
    if (!o.congestion_control.empty()) p.argv.insert(p.argv.end(), {"--congestion", o.congestion_control});
    if (o.trace) p.argv.insert(p.argv.end(), {"--trace", result.out_dir + "/trace-" + std::to_string(i) + ".jsonl"});
    if (authority) p.argv.insert(p.argv.end(), authority->peer_arguments(i).begin(), authority->peer_arguments(i).end());
    if (o.train) add_training_arguments(p.argv, *o.train, live.peers[i].compute_sps, i, result.out_dir);
    if (emulator) p.netns_path = emulator->netns_path(i);
    p.out_path = out_paths[i];
    p.log_path = log_paths[i];
    return p;
  };

  Children children(n);
  if (o.train)
    say("starting " + std::to_string(n) + " training peers (" + o.train->model + ", " + std::to_string(o.train->steps) +
        " steps, " + result.strategy + ", " + result.codec + ")");
  else
    say("starting " + std::to_string(n) + " peers (" + result.strategy + ", " + std::to_string(o.rounds) + " rounds, " +
        std::to_string(live.workload.parameters) + " parameters, " + result.codec + ")");
  // Each peer's kill times, earliest first (a peer may be killed, restarted and killed again).
  std::vector<std::deque<double>> kill_at(n);
  for (const auto& e : o.timed_kills) kill_at[e.peer].push_back(e.at_s);
  for (auto& times : kill_at) std::sort(times.begin(), times.end());
  for (std::size_t i = 0; i < n; ++i) {
    const auto join = std::find_if(o.joins.begin(), o.joins.end(), [i](const TimedPeerEvent& e) { return e.peer == i; });
    if (join != o.joins.end()) {
      children[i].restart_at = join->at_s;  // starts later: its first start counts as no restart
      children[i].incarnation = -1;
      continue;
    }
    children[i].pid = spawn(plan_for(i, 0));
    children[i].running = true;
  }

  std::vector<bool> churn_killed(n, false);  // the last incarnation was killed by the churn
  bool leaving = false;
  double leave_deadline = 0;
  const double t0 = EventLoop::monotonic_seconds();
  for (;;) {
    const double now = EventLoop::monotonic_seconds() - t0;
    if (authority) authority->maybe_reissue();
    // Reap.
    bool running = false, pending = false;
    for (std::size_t i = 0; i < n; ++i) {
      Child& c = children[i];
      if (c.running) {
        int status = 0;
        const pid_t r = waitpid(c.pid, &status, WNOHANG | WUNTRACED);
        if (r == c.pid && WIFSTOPPED(status)) {
          say("peer " + std::to_string(i) + " stopped (SIGSTOP): a silent departure");
          c.stopped_at = now;
        } else if (r == c.pid) {
          c.running = false;
          c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
          say("peer " + std::to_string(i) + " exited (" +
              (WIFEXITED(status) ? "code " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status))) + ")");
          // A stopped peer waited out its restart delay already.
          if (killed && o.kill && o.kill->peer == i && c.incarnation == 0 && o.kill->restart_after_s >= 0)
            c.restart_at = c.stopped_at ? now : now + o.kill->restart_after_s;
          c.stopped_at.reset();
          c.killing_stopped = false;
        }
      }
      if (c.running && c.stopped_at && o.kill && o.kill->restart_after_s >= 0 && now >= *c.stopped_at + o.kill->restart_after_s &&
          !c.killing_stopped) {
        say("killing the stopped peer " + std::to_string(i) + " to restart it");
        kill(c.pid, SIGKILL);
        c.killing_stopped = true;
      }
      if (c.running && !kill_at[i].empty() && now >= kill_at[i].front()) {
        kill_at[i].pop_front();
        say("killing peer " + std::to_string(i) + " (SIGKILL)");
        kill(c.pid, SIGKILL);
        if (o.timed_restart_after_s >= 0) c.restart_at = now + o.timed_restart_after_s;
      }
      if (c.restart_at && now >= *c.restart_at) {
        c.restart_at.reset();
        if (++c.incarnation > 0) ++result.restarts;
        say((c.incarnation > 0 ? "restarting peer " : "starting peer ") + std::to_string(i) +
            (c.incarnation > 0 ? " with the same identity" : " (joins the running collaboration)"));
        c.pid = spawn(plan_for(i, std::max(c.incarnation, 0)));
        c.running = true;
      }
      running |= c.running && !c.stopped_at;  // a stopped peer that stays stopped holds nothing up
      pending |= c.restart_at.has_value() || (c.stopped_at && o.kill && o.kill->restart_after_s >= 0);
    }
    if (churn && !leaving) {
      std::vector<bool> up(n);
      for (std::size_t i = 0; i < n; ++i) up[i] = children[i].running;
      if (const auto action = churn->poll(now, up)) {
        Child& c = children[action->peer];
        const std::string who = "peer " + std::to_string(action->peer);
        if (action->kind == ChurnAction::Kind::Kill) {
          say("churn: killing " + who + " (SIGKILL)");
          kill(c.pid, SIGKILL);
          churn_killed[action->peer] = true;
        } else {
          c.restart_at.reset();
          if (++c.incarnation > 0) ++result.restarts;
          say("churn: starting " + who + " again");
          c.pid = spawn(plan_for(action->peer, std::max(c.incarnation, 0)));
          c.running = running = true;
          churn_killed[action->peer] = false;
        }
      }
      if (now >= churn->leave_at()) {
        leaving = true;
        leave_deadline = now + churn->spec().grace_s;
        // One step for all: peers signalled at the same moment can be either side of a step, and
        // "after your next step" would then leave them holding different states.
        const std::uint64_t leave_at = highest_step(out_paths) + 1;
        say("churn over: asking every peer to leave at step " + std::to_string(leave_at) + " (SIGTERM)");
        for (std::size_t i = 0; i < n; ++i) {
          children[i].restart_at.reset();
          if (!children[i].running) continue;
          sigval value{};
          value.sival_int = static_cast<int>(std::min<std::uint64_t>(leave_at, INT32_MAX));
          sigqueue(children[i].pid, SIGTERM, value);
        }
        pending = false;
      }
    }
    if (!running && !pending) break;
    if (leaving && now > leave_deadline) {
      result.timed_out = true;
      say("peers still running " + exact_decimal(churn->spec().grace_s) + " s after they were asked to leave: stopping them");
      break;
    }
    if (now > o.deadline_s) {
      result.timed_out = true;
      say("deadline of " + exact_decimal(o.deadline_s) + " s reached: stopping every peer");
      break;
    }
    if (signals.wait_interrupted(0.05)) {
      result.interrupted = true;
      say("interrupted: stopping every peer and removing the emulated network");
      break;
    }
  }
  children.kill_all();
  for (std::size_t i = 0; i < n; ++i) result.exit_codes.push_back(children[i].exit_code);
  if (emulator) emulator->teardown();

  bool ok = !result.interrupted && !result.timed_out;
  for (std::size_t i = 0; i < n; ++i) {
    const bool timed_kill = std::any_of(o.timed_kills.begin(), o.timed_kills.end(), [i](const TimedPeerEvent& e) { return e.peer == i; });
    const bool killed_for_good = ((o.kill && o.kill->peer == i && o.kill->restart_after_s < 0) ||
                                  (timed_kill && o.timed_restart_after_s < 0) || churn_killed[i]) &&
                                 result.exit_codes[i] == 128 + SIGKILL;
    ok = ok && (result.exit_codes[i] == 0 || killed_for_good);
  }
  if (o.train) {
    result.training = collect_training(out_paths);
    const TrainingSummary& t = *result.training;
    ok = ok && t.consistent && t.samples.balanced;
    // Under churn the run ends when the churn does; otherwise at the step asked for.
    ok = ok && (churn ? t.survivors_identical : t.last_step >= o.train->steps);
    std::ofstream(result.out_dir + "/metrics.csv") << training_metrics_csv(t);
  } else {
    collect(result, out_paths, o.rounds);
    ok = ok && result.rounds.size() == o.rounds;
    for (const auto& r : result.rounds) ok = ok && r.incomplete == 0 && r.values_ok;
  }
  result.ok = ok;
  if (o.measure_loopback && !result.interrupted) {
    std::uint64_t bytes = 0;
    for (const auto& r : result.rounds) bytes = std::max(bytes, r.bytes_sent);
    bytes = std::clamp<std::uint64_t>(bytes, 64 << 20, 4ull << 30);
    say("measuring the loopback limit: one bulk TCP stream of " + std::to_string(bytes >> 20) + " MiB, 3 times");
    // The median of three: on a shared machine a single measurement swings with the load.
    std::vector<double> rates;
    for (int i = 0; i < 3; ++i) rates.push_back(measure_loopback_stream(bytes).bytes_per_s());
    std::sort(rates.begin(), rates.end());
    result.loopback_limit_Bps = rates[1];
  }
  std::ofstream(result.out_dir + "/results.json") << launch_result_json(result) << "\n";
  return result;
}

std::string launch_result_json(const LaunchResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["strategy"] = r.strategy;
  j["scale"] = r.scale;
  j["emulated_links"] = r.emulated_links;
  j["latency_emulated"] = r.latency_emulated;
  if (r.peers_behind_nat > 0) j["peers_behind_nat"] = r.peers_behind_nat;
  j["pacing"] = r.pacing;
  j["goodput"] = r.goodput;
  j["parameters"] = r.parameters;
  j["codec"] = r.codec;
  j["ok"] = r.ok;
  j["interrupted"] = r.interrupted;
  j["timed_out"] = r.timed_out;
  j["restarts"] = r.restarts;
  j["exit_codes"] = r.exit_codes;
  if (r.training) {
    j["training"] = training_json(*r.training);
    return j.dump(2);
  }
  j["mean_round_s"] = r.mean_round_s();
  if (r.loopback_limit_Bps > 0) j["loopback_limit_Bps"] = r.loopback_limit_Bps;
  j["rounds"] = nlohmann::ordered_json::array();
  for (const auto& x : r.rounds)
    j["rounds"].push_back({{"round", x.round},
                           {"participants", x.participants},
                           {"reported", x.reported},
                           {"incomplete", x.incomplete},
                           {"start_s", x.start_s},
                           {"end_s", x.end_s},
                           {"duration_s", x.duration_s},
                           {"min_fraction_averaged", x.min_fraction_averaged},
                           {"max_abs_error", x.max_abs_error},
                           {"values_ok", x.values_ok},
                           {"dropped_any", x.dropped_any},
                           {"bytes_sent", x.bytes_sent},
                           {"throughput_Bps", x.duration_s > 0 ? static_cast<double>(x.bytes_sent) / x.duration_s : 0.0}});
  return j.dump(2);
}

}  // namespace swarmlab::exec
