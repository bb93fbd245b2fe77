// swarmlab dmoe: Learning@home's decentralized mixture-of-experts in the simulator
// (docs/learning-at-home.md). `dmoe throughput` is the paper's throughput experiment: 224 blocks
// over 4 GPUs, asynchronous DMoE trainers against model-parallel training, for mean delays after
// each block; it prints the curves, and with --out writes dmoe_throughput.json, .csv and a plot.
// `dmoe converge` is the paper's convergence experiment live (exec/dmoe_convergence.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/data_paths.h"
#include "cli/python_script.h"
#include "exec/dmoe_convergence.h"
#include "learn/fashion_mnist.h"
#include "scenarios/dmoe_live.h"
#include "sim/experiments/dmoe_swarm.h"
#include "sim/experiments/dmoe_throughput.h"

namespace swarmlab::cli {
namespace {

struct ThroughputArgs {
  std::string block = "both";
  std::vector<double> delays_ms = {0, 25, 50, 100, 150, 200};
  std::uint32_t trainers = 64;
  double gpu_tflops = 10;
  double measure_s = 1800;
  std::uint64_t seed = 1;
  std::string out;
  bool json = false;
};

struct ConvergeArgs {
  std::string scenario;  // default: the shipped scenarios/dmoe/fashion-mnist.json
  double seconds = 120;
  std::string out = "out/dmoe-converge";
  bool json = false;
};

int run_converge(const ConvergeArgs& a) {
  exec::DmoeConvergenceConfig c;
  const std::string path = a.scenario.empty() ? find_data_dir("scenarios/dmoe") + "/fashion-mnist.json" : a.scenario;
  c.base = scenarios::load_dmoe_live_file(path);
  c.seconds = a.seconds;
  c.out_dir = prepare_out_dir(a.out, "--out").string();
  learn::load_fashion_mnist(learn::Split::Train);  // a dataset every process would fail on: once, here
  learn::load_fashion_mnist(learn::Split::Test);
  c.progress = [](const std::string& line) { std::cerr << "dmoe converge: " << line << "\n"; };
  const auto runs = exec::run_dmoe_convergence(c);
  nlohmann::ordered_json j;
  j["scenario"] = path;
  j["seconds"] = a.seconds;
  j["scaling"] = "trainers / 8: the paper's 64 trainers at 1 s mean delay -> " + std::to_string(c.high_delay_trainers) +
                 ", 16 at 100 ms -> " + std::to_string(c.low_delay_trainers);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  bool ok = true;
  for (const auto& r : runs) {
    ok = ok && r.result.ok;
    list.push_back({{"run", r.name}, {"model", r.dense ? "dense" : "dmoe"}, {"trainers", r.scenario.trainers},
                    {"delay_ms", r.scenario.delay_s * 1000}, {"ok", r.result.ok}, {"batches", r.result.batches},
                    {"dropped_batches", r.result.dropped}, {"samples_per_s", r.result.samples_per_s},
                    {"final_test_accuracy", r.result.final_test_accuracy ? nlohmann::ordered_json(*r.result.final_test_accuracy)
                                                                          : nlohmann::ordered_json(nullptr)}});
  }
  j["runs"] = list;
  const std::filesystem::path dir(c.out_dir);
  const int rc = run_analysis_script("plot_dmoe_convergence.py", {(dir / "convergence.csv").string(), (dir / "loss.csv").string(),
                                                                  (dir / "dmoe_convergence.png").string()});
  j["plot"] = rc == 0   ? "plot written to " + (dir / "dmoe_convergence.png").string()
              : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                        : "plot failed: analysis/plot_dmoe_convergence.py exited with status " + std::to_string(rc);
  write_json_file(dir / "dmoe_convergence.json", j);
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%-11s %8s %9s %9s %8s %11s %9s\n", "run", "trainers", "delay_ms", "batches", "dropped", "samples/s", "test_acc");
    for (const auto& r : runs)
      std::printf("%-11s %8u %9.0f %9llu %8llu %11.1f %9s\n", r.name.c_str(), r.scenario.trainers, r.scenario.delay_s * 1000,
                  static_cast<unsigned long long>(r.result.batches), static_cast<unsigned long long>(r.result.dropped),
                  r.result.samples_per_s,
                  r.result.final_test_accuracy ? (std::to_string(*r.result.final_test_accuracy).substr(0, 6)).c_str() : "-");
    std::printf("%s; results in %s/dmoe_convergence.json\n", j["plot"].get<std::string>().c_str(), c.out_dir.c_str());
  }
  return ok ? kExitOk : kExitFailure;
}

struct SwarmArgs {
  sim::DmoeSwarmConfig config;
  double announce_period_s = 600;
  std::string out;
  bool json = false;
};

nlohmann::ordered_json to_json(const sim::DmoeSwarmResult& r) {
  const sim::DmoeSwarmConfig& c = r.config;
  nlohmann::ordered_json j;
  j["runtimes"] = c.runtimes;
  j["trainers"] = c.trainers;
  j["layers"] = c.layers;
  j["grid"] = {{"dims", c.grid_dims}, {"side", c.grid_side}};
  j["experts_per_runtime"] = c.experts_per_runtime;
  j["k"] = c.k;
  j["batch_rows"] = c.batch_rows;
  j["hours"] = c.hours;
  j["churn_per_hour"] = c.churn_per_hour;
  j["packet_loss"] = c.packet_loss;
  j["announce_period_s"] = c.announce.period_s;
  j["alive_for_s"] = c.announce.alive_for_s;
  j["seed"] = c.seed;
  j["training"] = {{"batches", r.batches},
                   {"samples_per_s", r.samples_per_s},
                   {"mean_batch_s", r.mean_batch_s},
                   {"dropped", r.dropped},
                   {"dropped_no_experts", r.dropped_no_experts},
                   {"dropped_forward", r.dropped_forward},
                   {"dropped_backward", r.dropped_backward}};
  j["beam_search"] = {{"searches", r.searches},
                      {"found_k", r.searches_found_k},
                      {"found_k_share", r.found_k_share},
                      {"mean_lookups", r.mean_lookups},
                      {"max_lookups", r.max_lookups},
                      {"bound_d_k_m", r.lookup_bound},
                      {"mean_latency_s", r.mean_search_s}};
  j["expert_calls"] = {{"calls", r.expert_calls},
                       {"failed", r.expert_failures},
                       {"timed_out", r.expert_timeouts},
                       {"refused", r.expert_refusals},
                       {"link_failed", r.expert_link_failures}};
  j["dht"] = {{"messages_per_peer_minute", r.dht_messages_per_peer_minute},
              {"bytes_per_peer_minute", r.dht_bytes_per_peer_minute},
              {"announcement_stores", r.announcement_stores}};
  j["churn"] = {{"failures", r.failures}, {"taken_over", r.taken_over}, {"restarted_fresh", r.restarted_fresh}};
  j["events"] = r.events;
  j["simulated_s"] = r.simulated_s;
  return j;
}

nlohmann::ordered_json to_json(const sim::DmoeThroughputResult& r) {
  nlohmann::ordered_json j;
  j["block"] = sim::dmoe_block_name(r.config.block);
  j["blocks"] = r.config.blocks;
  j["gpus"] = r.config.gpus;
  j["trainers"] = r.config.trainers;
  j["gpu_tflops"] = r.config.gpu_flops / 1e12;
  j["forward_flops"] = r.cost.forward_flops;
  j["forward_ms"] = r.forward_s * 1e3;
  j["samples_per_batch"] = r.cost.samples_per_batch;
  j["measure_s"] = r.config.measure_s;
  j["seed"] = r.config.seed;
  j["pipelined_no_delay_samples_per_s"] = r.pipelined_upper_bound;
  j["points"] = nlohmann::ordered_json::array();
  for (const auto& p : r.points)
    j["points"].push_back({{"mean_delay_ms", p.mean_delay_s * 1e3},
                           {"dmoe_samples_per_s", p.dmoe},
                           {"model_parallel_samples_per_s", p.model_parallel}});
  j["dmoe_retained"] = r.dmoe_retained;
  j["model_parallel_retained"] = r.model_parallel_retained;
  return j;
}

const bool dmoe_registered = register_command(
    "dmoe",
    "Learning@home's decentralized mixture-of-experts: `dmoe throughput` compares asynchronous DMoE trainers with "
    "model-parallel training as the delay after each block grows; `dmoe swarm` runs thousands of runtimes on the DHT "
    "with churn; `dmoe converge` trains DMoE and dense models live (docs/learning-at-home.md)",
    [](CLI::App& sub) -> std::function<int()> {
      sub.require_subcommand(1);
      auto t = std::make_shared<ThroughputArgs>();
      CLI::App* thr = sub.add_subcommand("throughput", "224 blocks over 4 GPUs: DMoE vs model-parallel vs pipelined");
      thr->add_option("--block", t->block, "ffn, transformer or both (default both)")
          ->check(CLI::IsMember({"ffn", "transformer", "both"}));
      thr->add_option("--delays-ms", t->delays_ms, "mean delays after each block, ms (default 0,25,50,100,150,200)")
          ->delimiter(',')
          ->check(Real(0, 10000, "--delays-ms"));
      thr->add_option("--trainers", t->trainers, "asynchronous DMoE trainers (default 64)")->check(Count(1, 4096, "a number of trainers"));
      thr->add_option("--gpu-tflops", t->gpu_tflops, "sustained TFLOP/s of one GPU (default 10)")
          ->check(Real(0.001, 10000, "--gpu-tflops"));
      thr->add_option("--measure-s", t->measure_s, "simulated seconds measured per run (default 1800)")
          ->check(Real(1, 1e6, "--measure-s"));
      thr->add_option("--seed", t->seed, "seed of the delays (default 1)")->check(Seed());
      thr->add_option("--out", t->out, "write dmoe_throughput.json, dmoe_throughput.csv and dmoe_throughput.png here");
      thr->add_flag("--json", t->json, "print JSON");

      auto w = std::make_shared<SwarmArgs>();
      sim::DmoeSwarmConfig& c = w->config;
      CLI::App* swarm = sub.add_subcommand("swarm", "internet scale: runtimes and trainers on the DHT with churn and loss");
      swarm->add_option("--runtimes", c.runtimes, "expert runtimes (default 10000)")->check(Count(1, 100000, "a number of runtimes"));
      swarm->add_option("--trainers", c.trainers, "trainers (default 100)")->check(Count(1, 100000, "a number of trainers"));
      swarm->add_option("--layers", c.layers, "DMoE layers (default 2)")->check(Count(1, 64, "a number of layers"));
      swarm->add_option("--grid-dims", c.grid_dims, "d (default 2)")->check(Count(1, core::dmoe::kMaxGridDims, "a number of grid dimensions"));
      swarm->add_option("--grid-side", c.grid_side, "M (default 128)")->check(Count(1, core::dmoe::kMaxGridSide, "a grid side"));
      swarm->add_option("--experts-per-runtime", c.experts_per_runtime, "default 2")->check(Count(1, 1024, "a number of experts"));
      swarm->add_option("-k", c.k, "experts per layer and batch (default 4)")->check(Count(1, 256, "a number of experts"));
      swarm->add_option("--hours", c.hours, "measured simulated hours (default 1)")->check(Real(0.001, 1000, "--hours"));
      swarm->add_option("--churn-per-hour", c.churn_per_hour, "share of runtimes failing per hour (default 0.01)")
          ->check(Real(0, 100, "--churn-per-hour"));
      swarm->add_option("--packet-loss", c.packet_loss, "per packet (default 0.0033)")->check(Real(0, 0.5, "--packet-loss"));
      swarm->add_option("--announce-period-s", w->announce_period_s,
                        "how often runtimes announce; t, the time a prefix stays alive, is twice this (default 600)")
          ->check(Real(1, 86400, "--announce-period-s"));
      swarm->add_option("--seed", c.seed, "default 1")->check(Seed());
      swarm->add_option("--out", w->out, "write dmoe_swarm.json here");
      swarm->add_flag("--json", w->json, "print JSON");

      auto v = std::make_shared<ConvergeArgs>();
      CLI::App* converge = sub.add_subcommand(
          "converge", "live: DMoE layers vs a dense network of equal compute, high and low delay (expert runtime and trainer processes)");
      converge->add_option("--scenario", v->scenario, "live DMoE scenario (default scenarios/dmoe/fashion-mnist.json)");
      converge->add_option("--seconds", v->seconds, "training time of each of the four runs (default 120)")->check(Real(5, 86400, "--seconds"));
      converge->add_option("--out", v->out, "output folder (default out/dmoe-converge)");
      converge->add_flag("--json", v->json, "print JSON");

      return [t, w, swarm, v, converge] {
        if (converge->parsed()) return run_converge(*v);
        if (swarm->parsed()) {
          w->config.announce = {2 * w->announce_period_s, w->announce_period_s};
          if (!w->out.empty()) prepare_out_dir(w->out, "--out");
          sim::DmoeSwarmResult r;
          try {
            r = sim::run_dmoe_swarm(w->config);
          } catch (const std::invalid_argument& e) {
            // Only the composition's checks throw this, before anything runs.
            throw std::invalid_argument(std::string(e.what()) +
                                        " (set by --runtimes, --layers, --grid-dims, --grid-side, --experts-per-runtime)");
          }
          const nlohmann::ordered_json j = to_json(r);
          if (!w->out.empty()) write_json_file(std::filesystem::path(w->out) / "dmoe_swarm.json", j);
          if (w->json) {
            std::cout << j.dump(2) << "\n";
            return kExitOk;
          }
          const sim::DmoeSwarmConfig& c = r.config;
          std::printf("%u runtimes (%u experts each, %u layers on %u^%u grids), %u trainers, k = %u; %.2f h measured, "
                      "churn %.3f/h, loss %.2f%%\n\n",
                      c.runtimes, c.experts_per_runtime, c.layers, c.grid_side, c.grid_dims, c.trainers, c.k, c.hours,
                      c.churn_per_hour, 100 * c.packet_loss);
          std::printf("training:     %llu batches, %.1f samples/s, %.2f s per batch; dropped %llu (no experts %llu, "
                      "forward %llu, backward %llu)\n",
                      static_cast<unsigned long long>(r.batches), r.samples_per_s, r.mean_batch_s,
                      static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.dropped_no_experts),
                      static_cast<unsigned long long>(r.dropped_forward), static_cast<unsigned long long>(r.dropped_backward));
          std::printf("beam search:  %llu searches, %.2f%% found k experts; lookups mean %.2f, max %llu (bound d*k*M = "
                      "%.0f); %.3f s each\n",
                      static_cast<unsigned long long>(r.searches), 100 * r.found_k_share, r.mean_lookups,
                      static_cast<unsigned long long>(r.max_lookups), r.lookup_bound, r.mean_search_s);
          std::printf("expert calls: %llu, failed %llu (timed out %llu, refused %llu, link failed %llu)\n",
                      static_cast<unsigned long long>(r.expert_calls), static_cast<unsigned long long>(r.expert_failures),
                      static_cast<unsigned long long>(r.expert_timeouts), static_cast<unsigned long long>(r.expert_refusals),
                      static_cast<unsigned long long>(r.expert_link_failures));
          std::printf("DHT traffic:  %.1f messages, %.0f bytes per peer-minute; %llu announcement stores\n",
                      r.dht_messages_per_peer_minute, r.dht_bytes_per_peer_minute,
                      static_cast<unsigned long long>(r.announcement_stores));
          std::printf("churn:        %llu runtimes failed; %llu experts taken over from checkpoints, %llu restarted fresh\n",
                      static_cast<unsigned long long>(r.failures), static_cast<unsigned long long>(r.taken_over),
                      static_cast<unsigned long long>(r.restarted_fresh));
          std::printf("\n%llu events, %.0f s simulated; wall %.1f s (measured phase %.1f s)\n",
                      static_cast<unsigned long long>(r.events), r.simulated_s, r.wall_s, r.wall_measured_s);
          return kExitOk;
        }
        if (t->delays_ms.empty() || t->delays_ms.front() != 0)
          throw std::invalid_argument("--delays-ms: expected 0 first (the curves are relative to it), got " +
                                      std::to_string(t->delays_ms.empty() ? -1.0 : t->delays_ms.front()));
        if (!t->out.empty()) prepare_out_dir(t->out, "--out");
        std::vector<sim::DmoeBlock> blocks;
        if (t->block != "transformer") blocks.push_back(sim::DmoeBlock::FeedForward);
        if (t->block != "ffn") blocks.push_back(sim::DmoeBlock::Transformer);
        nlohmann::ordered_json all = nlohmann::ordered_json::array();
        std::vector<sim::DmoeThroughputResult> results;
        for (const sim::DmoeBlock b : blocks) {
          sim::DmoeThroughputConfig c;
          c.block = b;
          c.trainers = t->trainers;
          c.gpu_flops = t->gpu_tflops * 1e12;
          c.measure_s = t->measure_s;
          c.seed = t->seed;
          c.mean_delays_s.clear();
          for (const double ms : t->delays_ms) c.mean_delays_s.push_back(ms / 1e3);
          results.push_back(sim::run_dmoe_throughput(c));
          all.push_back(to_json(results.back()));
        }
        nlohmann::ordered_json j;
        j["experiments"] = all;
        if (!t->out.empty()) {
          const std::filesystem::path dir(t->out);
          write_json_file(dir / "dmoe_throughput.json", j);
          std::ofstream csv(dir / "dmoe_throughput.csv");
          csv << "block,mean_delay_ms,method,samples_per_s\n";
          for (const auto& r : results) {
            for (const auto& p : r.points) {
              csv << sim::dmoe_block_name(r.config.block) << ',' << p.mean_delay_s * 1e3 << ",dmoe," << p.dmoe << '\n';
              csv << sim::dmoe_block_name(r.config.block) << ',' << p.mean_delay_s * 1e3 << ",model-parallel,"
                  << p.model_parallel << '\n';
              csv << sim::dmoe_block_name(r.config.block) << ',' << p.mean_delay_s * 1e3 << ",pipelined-no-delay,"
                  << r.pipelined_upper_bound << '\n';
            }
          }
          csv.close();
          if (!csv) throw std::runtime_error("could not write " + (dir / "dmoe_throughput.csv").string());
          const int rc = run_analysis_script("plot_dmoe_throughput.py",
                                             {(dir / "dmoe_throughput.csv").string(), (dir / "dmoe_throughput.png").string()});
          j["plot"] = rc == 0   ? "plot written to " + (dir / "dmoe_throughput.png").string()
                      : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                                : "plot failed: analysis/plot_dmoe_throughput.py exited with status " + std::to_string(rc);
        }
        if (t->json) {
          std::cout << j.dump(2) << "\n";
          return kExitOk;
        }
        for (const auto& r : results) {
          std::printf("%s blocks: %u over %u GPUs at %.1f TFLOP/s; forward %.2f ms per block and batch; %u DMoE trainers\n",
                      sim::dmoe_block_name(r.config.block), r.config.blocks, r.config.gpus, r.config.gpu_flops / 1e12,
                      r.forward_s * 1e3, r.config.trainers);
          std::printf("  pipelined model-parallel, no delay (every GPU always busy): %.2f samples/s\n",
                      r.pipelined_upper_bound);
          std::printf("  %14s %14s %16s\n", "mean delay", "DMoE", "model-parallel");
          for (const auto& p : r.points)
            std::printf("  %11.0f ms %14.2f %16.3f\n", p.mean_delay_s * 1e3, p.dmoe, p.model_parallel);
          std::printf("  throughput(%.0f ms) / throughput(0): DMoE %.3f, model-parallel %.3f\n\n",
                      r.points.back().mean_delay_s * 1e3, r.dmoe_retained, r.model_parallel_retained);
        }
        if (j.contains("plot")) std::printf("%s\n", j["plot"].get<std::string>().c_str());
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
