#include "exec/dmoe_launch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "exec/child_processes.h"
#include "exec/event_loop.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {
namespace {

constexpr double kRuntimeLeave_s = 10;  // runtimes asked to leave get this long, then SIGKILL

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

DmoeLaunchResult launch_dmoe(const DmoeLaunchOptions& o) {
  const scenarios::DmoeLiveScenario& sc = o.scenario;
  auto say = [&o](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  DmoeLaunchResult result;
  result.out_dir = o.out_dir;
  std::filesystem::create_directories(o.out_dir);
  const std::string scenario_path = std::filesystem::absolute(o.out_dir + "/scenario.json").string();
  {
    std::ofstream f(scenario_path);
    f << scenarios::dmoe_live_json(sc);
    if (!f) throw std::runtime_error("cannot write " + scenario_path);
  }
  const std::uint32_t n = sc.peers();
  const std::string executable = o.executable.empty() ? self_executable() : o.executable;
  const auto ports = reserve_loopback_ports(n);
  std::string peers;
  for (std::uint32_t i = 0; i < n; ++i)
    peers.append(i ? "," : "").append(std::to_string(i)).append("=").append(SocketAddress::loopback(ports[i]).to_string());
  const std::uint64_t run_id = static_cast<std::uint64_t>(getpid()) << 32 ^ static_cast<std::uint64_t>(EventLoop::monotonic_seconds() * 1e6);
  const double origin = EventLoop::monotonic_seconds();
  std::vector<std::string> out_paths;
  SignalScope signals;
  Children children(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool runtime = i < sc.runtimes;
    SpawnPlan p;
    p.executable = executable;
    p.argv = {executable, runtime ? "dmoe-runtime" : "dmoe-trainer", scenario_path, "--id", std::to_string(i), "--peers", peers,
              "--run-id", std::to_string(run_id), "--clock-origin", exact_decimal(origin)};
    if (!o.data_dir.empty()) p.argv.insert(p.argv.end(), {"--data", o.data_dir});
    p.out_path = o.out_dir + "/peer-" + std::to_string(i) + ".jsonl";
    p.log_path = o.out_dir + "/peer-" + std::to_string(i) + ".log";
    std::filesystem::remove(p.out_path);
    std::filesystem::remove(p.log_path);
    out_paths.push_back(p.out_path);
    children[i].pid = spawn(p);
    children[i].running = true;
  }
  say("started " + std::to_string(sc.runtimes) + " expert runtimes and " + std::to_string(sc.trainers) + " trainers; outputs in " + o.out_dir);
  const double deadline = o.deadline_s > 0 ? o.deadline_s : sc.duration_s + 120;
  std::vector<bool> kill_done(o.kills.size(), false);
  std::optional<double> runtimes_asked;
  const double t0 = EventLoop::monotonic_seconds();
  for (;;) {
    const double now = EventLoop::monotonic_seconds() - t0;
    for (std::size_t k = 0; k < o.kills.size(); ++k) {
      const auto [peer, at] = o.kills[k];
      if (kill_done[k] || now < at) continue;
      kill_done[k] = true;
      if (children[peer].running) {
        say("killing expert runtime " + std::to_string(peer) + " (SIGKILL) at " + exact_decimal(now) + " s");
        kill(children[peer].pid, SIGKILL);
        result.killed.push_back(peer);
      }
    }
    bool trainers_running = false, any_running = false;
    for (std::uint32_t i = 0; i < n; ++i) {
      any_running |= children[i].running;
      if (i >= sc.runtimes) trainers_running |= children[i].running;
    }
    if (!any_running) break;
    if (!trainers_running && !runtimes_asked) {
      runtimes_asked = now;
      say("every trainer finished: asking the runtimes to leave (SIGTERM)");
      for (std::uint32_t i = 0; i < sc.runtimes; ++i)
        if (children[i].running) kill(children[i].pid, SIGTERM);
    }
    if ((runtimes_asked && now - *runtimes_asked > kRuntimeLeave_s) || now > deadline) {
      result.timed_out = !runtimes_asked || now > deadline;
      say(now > deadline ? "deadline reached: stopping every process" : "runtimes still up after SIGTERM: stopping them");
      break;
    }
    if (signals.wait_interrupted(0.05)) {
      result.interrupted = true;
      break;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!children[i].running) continue;
      int status = 0;
      if (waitpid(children[i].pid, &status, WNOHANG) == children[i].pid) {
        children[i].running = false;
        children[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (i >= sc.runtimes || children[i].exit_code != 0)
          say((i < sc.runtimes ? "runtime " : "trainer ") + std::to_string(i) + " exited with " + std::to_string(children[i].exit_code));
      }
    }
  }
  children.kill_all();
  for (std::uint32_t i = 0; i < n; ++i) result.exit_codes.push_back(children[i].exit_code);

  // The books.
  std::ofstream batches(o.out_dir + "/batches.csv"), evals(o.out_dir + "/evals.csv");
  batches << "time_s,trainer,batch,loss,accuracy,experts_answered\n";
  evals << "time_s,batch,test_accuracy,test_loss,test_samples\n";
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["model"] = sc.dense ? "dense" : "dmoe";
  j["runtimes"] = sc.runtimes;
  j["trainers"] = sc.trainers;
  j["delay_ms"] = sc.delay_s * 1000;
  j["duration_s"] = sc.duration_s;
  bool trainers_ok = true;
  double first_batch = -1, last_batch = 0;
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (std::uint32_t i = sc.runtimes; i < n; ++i) {
    for (const auto& line : read_lines(out_paths[i])) {
      const std::string event = line.value("event", "");
      if (event == "batch") {
        const double t = line.value("time_s", 0.0);
        batches << exact_decimal(t) << ',' << line.value("trainer", 0) << ',' << line.value("batch", 0) << ',' << exact_decimal(line.value("loss", 0.0))
                << ',' << exact_decimal(line.value("accuracy", 0.0)) << ',' << line.value("experts_answered", 0) << '\n';
        if (first_batch < 0 || t < first_batch) first_batch = t;
        last_batch = std::max(last_batch, t);
      } else if (event == "eval") {
        evals << exact_decimal(line.value("time_s", 0.0)) << ',' << line.value("batch", 0) << ',' << exact_decimal(line.value("test_accuracy", 0.0))
              << ',' << exact_decimal(line.value("test_loss", 0.0)) << ',' << line.value("test_samples", 0) << '\n';
        curve.push_back({{"time_s", line.value("time_s", 0.0)}, {"batch", line.value("batch", 0)},
                         {"test_accuracy", line.value("test_accuracy", 0.0)}, {"test_samples", line.value("test_samples", 0)}});
      } else if (event == "exit") {
        result.batches += line.value("batches", std::uint64_t{0});
        result.dropped += line.value("dropped", std::uint64_t{0});
        result.failed_calls += line.value("failed_calls", std::uint64_t{0});
        result.timed_out_calls += line.value("timed_out", std::uint64_t{0});
      }
    }
    trainers_ok = trainers_ok && result.exit_codes[i] == 0;
  }
  // The first trainer's last evaluation is on the whole test set, as it leaves.
  if (!curve.empty()) result.final_test_accuracy = curve.back().value("test_accuracy", 0.0);
  // A runtime's last stats or exit line holds its keeper's counts (a killed one has no exit line).
  for (std::uint32_t i = 0; i < sc.runtimes; ++i) {
    const auto lines = read_lines(out_paths[i]);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
      if (it->contains("taken_over")) {
        result.taken_over += it->value("taken_over", std::uint64_t{0});
        result.restarted_fresh += it->value("restarted_fresh", std::uint64_t{0});
        break;
      }
  }
  if (last_batch > first_batch && first_batch >= 0)
    result.samples_per_s = static_cast<double>(result.batches) * sc.batch / (last_batch - first_batch);
  result.ok = trainers_ok && !result.timed_out && !result.interrupted && result.batches > 0;
  j["ok"] = result.ok;
  j["batches"] = result.batches;
  j["dropped_batches"] = result.dropped;
  j["failed_expert_calls"] = result.failed_calls;
  j["timed_out_expert_calls"] = result.timed_out_calls;
  j["samples_per_s"] = result.samples_per_s;
  j["final_test_accuracy"] = result.final_test_accuracy ? nlohmann::ordered_json(*result.final_test_accuracy) : nlohmann::ordered_json(nullptr);
  j["experts_taken_over"] = result.taken_over;
  j["experts_restarted_fresh"] = result.restarted_fresh;
  j["killed_runtimes"] = result.killed;
  j["exit_codes"] = result.exit_codes;
  j["test_accuracy_curve"] = curve;
  result.results_json = j.dump(2);
  std::ofstream(o.out_dir + "/results.json") << result.results_json << "\n";
  return result;
}

}  // namespace swarmlab::exec
