// swarmlab placement: Hydra's distribution policy (docs/hydra.md §6). A policy network, trained
// with REINFORCE against the simulator (learn/torch/torch_placement_policy.h), sizes each
// device's share of the batch on every composition in --scenarios; its step time is set beside
// equal shares, shares proportional to compute, and DeDLOC's planner, all measured by the same
// step model (sim/experiments/batch_placement.h).
//
// --out DIR writes curve.csv (update, composition, mean sampled and greedy step seconds),
// placement.json (what --json prints) and curve.png. Same arguments, same output.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/data_paths.h"
#include "cli/progress.h"
#include "cli/python_script.h"
#include "core/input_error.h"
#include "learn/torch/torch_placement_policy.h"
#include "scenarios/applicability.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/batch_placement.h"
#include "sim/network/backend.h"

namespace swarmlab::cli {
namespace {

struct PlacementArgs {
  std::string scenario_dir;
  std::string backend = "flow";
  std::string out;
  learn::PolicyTrainingConfig policy;
  double pass_overhead_s = sim::PlacementConfig{}.pass_overhead_s;
  bool json = false;
  bool quiet = false;
};

std::string sizes_text(const std::vector<std::uint64_t>& sizes) {
  std::string s;
  for (std::uint64_t n : sizes) {
    if (!s.empty()) s += ',';
    s += std::to_string(n);  // appended: GCC 12 warns falsely on "," + std::to_string(n)
  }
  return s;
}

// A device's level scales its speed: the top level on every device is the proportional split,
// level 0 leaves the device out.
std::vector<std::uint64_t> sizes_of(const sim::StepTimeModel& model, const std::vector<std::uint32_t>& levels) {
  std::vector<double> weights(levels.size());
  for (std::size_t d = 0; d < levels.size(); ++d) weights[d] = levels[d] * model.device_sps(d);
  return sim::split_batch(model.batch(), weights);
}

int run_placement(const PlacementArgs& a) {
  const std::string dir = a.scenario_dir.empty() ? find_data_dir("scenarios/placement") : a.scenario_dir;
  if (!std::filesystem::is_directory(dir))
    throw core::InputError("command line", "--scenarios", "expected a folder of compositions (*.json), got " + traces::quoted(dir));
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw core::InputError("command line", "--scenarios", "expected a folder holding compositions (*.json), got " + traces::quoted(dir) + ", which holds none");
  sim::PlacementConfig pc;
  pc.backend = a.backend;
  pc.pass_overhead_s = a.pass_overhead_s;
  std::vector<std::unique_ptr<sim::StepTimeModel>> models;
  for (const auto& f : files) {
    scenarios::Scenario sc = scenarios::load_scenario(f.string());
    scenarios::require_collaboration(sc, "placement");
    models.push_back(std::make_unique<sim::StepTimeModel>(std::move(sc), pc));
    if (models.back()->devices() != models.front()->devices())
      throw core::InputError(f.string(), "peers",
                             "expected " + std::to_string(models.front()->devices()) + " devices (peers with compute_sps > 0) as in " +
                                 files.front().string() + ": one policy network serves every composition, got " +
                                 std::to_string(models.back()->devices()));
  }
  if (!a.out.empty()) prepare_out_dir(a.out, "--out");

  struct Baselines {
    std::vector<std::uint64_t> equal, proportional;
    double equal_s = 0, proportional_s = 0;
    sim::StepTimeModel::PlannerStep planner;
  };
  std::vector<Baselines> base;
  std::vector<learn::PlacementTask> tasks;
  for (auto& m : models) {
    Baselines b;
    b.equal = sim::equal_split(m->batch(), m->devices());
    b.proportional = sim::proportional_split(*m);
    b.equal_s = m->step_seconds(b.equal);
    b.proportional_s = m->step_seconds(b.proportional);
    b.planner = m->planner_step();
    sim::StepTimeModel* model = m.get();
    tasks.push_back({model->composition().name, sim::placement_features(model->composition(), pc.transport), model->devices(),
                     [model](const std::vector<std::uint32_t>& levels) { return model->step_seconds(sizes_of(*model, levels)); },
                     b.equal_s});
    base.push_back(std::move(b));
  }
  // One network per composition, each trained from the same seed: one network trained on all
  // three at once settled on their common answer (every device in) and never left slow-uplinks'
  // V100s out, which it learns in about 25 updates alone (docs/hydra.md §6).
  Progress progress("placement", a.quiet || a.json);
  learn::PolicyTrainingConfig policy = a.policy;
  std::vector<learn::PolicyTrainingResult> trained;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    policy.on_update = [&, t](std::uint32_t done) { progress.update(t * policy.updates + done, tasks.size() * policy.updates); };
    trained.push_back(learn::train_placement_policy({tasks[t]}, policy));
  }

  using Json = nlohmann::ordered_json;
  Json j;
  j["policy"] = {{"updates", policy.updates}, {"samples", policy.samples}, {"levels", policy.levels},
                 {"hidden", policy.hidden}, {"learning_rate", policy.learning_rate},
                 {"baseline_decay", policy.baseline_decay}, {"entropy_weight", policy.entropy_weight},
                 {"seed", policy.seed}, {"parameters", trained.front().parameters}, {"networks", "one per composition"}};
  j["backend"] = a.backend;
  j["pass_overhead_s"] = a.pass_overhead_s;
  auto& rows = j["compositions"] = Json::array();
  for (std::size_t t = 0; t < models.size(); ++t) {
    const auto& m = *models[t];
    const auto learned = sizes_of(m, trained[t].greedy_levels[0]);
    Json devices = Json::array();
    for (std::size_t d = 0; d < m.devices(); ++d) devices.push_back(m.device_name(d));
    rows.push_back({{"name", m.composition().name},
                    {"source", m.composition().source},
                    {"devices", devices},
                    {"batch", m.batch()},
                    {"equal", {{"sizes", base[t].equal}, {"step_s", base[t].equal_s}}},
                    {"proportional", {{"sizes", base[t].proportional}, {"step_s", base[t].proportional_s}}},
                    {"planner",
                     {{"sizes", base[t].planner.sizes},
                      {"compute_s", base[t].planner.compute_s},
                      {"averaging_s", base[t].planner.averaging_s},
                      {"step_s", base[t].planner.step_s()}}},
                    {"learned", {{"sizes", learned}, {"step_s", trained[t].curve.back().greedy_step_s[0]}}},
                    {"rounds_simulated", m.simulated_rounds()}});
  }
  if (!a.out.empty()) {
    {
      std::ofstream csv(std::filesystem::path(a.out) / "curve.csv");
      csv << "update,composition,mean_step_s,greedy_step_s\n";
      for (std::size_t t = 0; t < models.size(); ++t)
        for (const auto& p : trained[t].curve)
          csv << p.update << "," << models[t]->composition().name << "," << p.mean_step_s[0] << "," << p.greedy_step_s[0] << "\n";
    }  // closed before the plot script reads it
    std::vector<std::string> plot_args = {a.out + "/curve.png", a.out + "/curve.csv"};
    for (std::size_t t = 0; t < models.size(); ++t)
      plot_args.push_back(models[t]->composition().name + "=" + std::to_string(base[t].equal_s) + "," +
                          std::to_string(base[t].proportional_s) + "," + std::to_string(base[t].planner.step_s()));
    const int rc = run_analysis_script("plot_placement.py", plot_args);
    j["plot"] = rc == 0   ? "plot written to " + a.out + "/curve.png"
                : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                          : "plot failed: analysis/plot_placement.py exited with status " + std::to_string(rc);
    std::ofstream(std::filesystem::path(a.out) / "placement.json") << j.dump(2) << "\n";
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("Hydra's distribution policy: REINFORCE, %u updates x %u samples, %u share levels, one network of "
              "%zu parameters per composition (%s backend)\n\n",
              policy.updates, policy.samples, policy.levels, trained.front().parameters, a.backend.c_str());
  std::printf("%-24s %9s %12s %9s %9s %9s\n", "composition", "equal_s", "proportional", "planner", "learned", "vs_best");
  for (std::size_t t = 0; t < models.size(); ++t) {
    const double best = std::min({base[t].equal_s, base[t].proportional_s, base[t].planner.step_s()});
    std::printf("%-24s %9.2f %12.2f %9.2f %9.2f %+8.1f%%\n", models[t]->composition().name.c_str(), base[t].equal_s,
                base[t].proportional_s, base[t].planner.step_s(), trained[t].curve.back().greedy_step_s[0],
                100 * (trained[t].curve.back().greedy_step_s[0] / best - 1));
  }
  std::printf("\nsizes (devices in file order):\n");
  for (std::size_t t = 0; t < models.size(); ++t) {
    std::printf("%-24s proportional %s\n", models[t]->composition().name.c_str(), sizes_text(base[t].proportional).c_str());
    std::printf("%-24s planner      %s\n", "", sizes_text(base[t].planner.sizes).c_str());
    std::printf("%-24s learned      %s\n", "", sizes_text(sizes_of(*models[t], trained[t].greedy_levels[0])).c_str());
  }
  if (j.contains("plot")) std::printf("\n%s\n", j["plot"].get<std::string>().c_str());
  return kExitOk;
}

const bool placement_registered = register_command(
    "placement",
    "Hydra's distribution policy: mini-batch sizes per device learned with REINFORCE against the simulator, beside "
    "equal, proportional and DeDLOC's planner",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<PlacementArgs>();
      sub.add_option("--scenarios", a->scenario_dir,
                     "folder of compositions (*.json), each with the same number of devices (default: scenarios/placement)");
      sub.add_option("--backend", a->backend, "network backend")
          ->check(CLI::IsMember(sim::available_backends()))
          ->capture_default_str();
      sub.add_option("--updates", a->policy.updates, "policy updates (Adam steps)")->check(Count(1, 100000))->capture_default_str();
      sub.add_option("--samples", a->policy.samples, "level vectors drawn per composition and update")
          ->check(Count(1, 4096))
          ->capture_default_str();
      sub.add_option("--levels", a->policy.levels, "share levels per device (0 = left out)")->check(Count(2, 64))->capture_default_str();
      sub.add_option("--learning-rate", a->policy.learning_rate, "Adam's learning rate")
          ->check(Positive(1, "a learning rate"))
          ->capture_default_str();
      sub.add_option("--entropy-weight", a->policy.entropy_weight, "weight of the policy's entropy in the loss (exploration)")
          ->check(Real(0, 100, "a weight"))
          ->capture_default_str();
      sub.add_option("--seed", a->policy.seed, "seed of the network and the sampling")->check(Seed())->capture_default_str();
      sub.add_option("--pass-overhead", a->pass_overhead_s, "seconds each pass after a device's first costs (gradient accumulation)")
          ->check(Real(0, 3600, "seconds"))
          ->capture_default_str();
      sub.add_option("--out", a->out, "write curve.csv, curve.png and placement.json here");
      sub.add_flag("--json", a->json, "print JSON");
      sub.add_flag("--quiet", a->quiet, "no progress bar");
      return [a] { return run_placement(*a); };
    });

}  // namespace
}  // namespace swarmlab::cli
