// swarmlab allreduce: Hydra's fault-tolerant all-reduce (recursive halving-doubling among Raft
// replica groups, docs/hydra.md §5, core/allreduce/) beside butterfly all-reduce and DeDLOC's planner
// on the same Table 1-like compositions, and Moshpit averaging over them (groups of at most ⌈√P⌉,
// one round per axis of its grid; sim/experiments/replicated_allreduce_experiment.h).
//
// For each P in --groups and R in --replicas it times one round with no failure and one round each
// with a follower replica, a group's leader and a whole group failing 30% into it, then the round
// after the group's loss: P - 1 groups, its samples re-queued onto them ("requeued"). --json prints
// {"rows": [{"groups", "replicas", "election_s", "step_s", "butterfly_s", "planner_s", "moshpit_s",
// "moshpit_group_size", "moshpit_rounds",
// "rounds": [{"failure", "groups", "weight", "round_s", "replicated_s", "min_fraction_averaged",
// "took_over_at", "lost_chunk_bytes", "bytes_sent", "replication_bytes", "completed"}],
// "after_group_loss": {the same fields}}]}. Same arguments, same output.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "sim/experiments/replicated_allreduce_experiment.h"

namespace swarmlab::cli {
namespace {

struct AllReduceArgs {
  std::vector<std::int64_t> groups = {16, 64, 256};
  std::vector<std::int64_t> replicas = {1, 3};
  std::string backend = "flow";
  std::int64_t parameters = 25'557'032;
  bool json = false;
};

int run_allreduce(const AllReduceArgs& a) {
  for (std::int64_t g : a.groups)
    if (g < 2 || g > 1024) {
      std::cerr << "swarmlab allreduce: --groups: expected counts in [2, 1024], got " << g << "\n";
      return kExitBadInput;
    }
  for (std::int64_t r : a.replicas)
    if (r < 1 || r > 7) {
      std::cerr << "swarmlab allreduce: --replicas: expected counts in [1, 7], got " << r << "\n";
      return kExitBadInput;
    }
  if (a.parameters < 1024) {
    std::cerr << "swarmlab allreduce: --parameters: expected at least 1024, got " << a.parameters << "\n";
    return kExitBadInput;
  }
  using Json = nlohmann::ordered_json;
  Json rows = Json::array();
  if (!a.json)
    std::printf("%6s %3s | %-8s %8s %8s %7s %8s %9s %10s | %9s %8s %8s\n", "groups", "R", "failure", "round_s",
                "vs_none", "averaged", "took_over", "lost_MB", "repl_GB/GB", "butterfly", "planner", "moshpit");
  for (std::int64_t g : a.groups) {
    bool first = true;
    double butterfly = 0, planner = 0, moshpit = 0;  // measured once per P, with the first R
    std::uint32_t moshpit_group = 0, moshpit_rounds = 0;
    for (std::int64_t r : a.replicas) {
      sim::ReplicatedAllReduceConfig c;
      c.groups = static_cast<std::uint32_t>(g);
      c.replicas = static_cast<std::uint32_t>(r);
      c.backend = a.backend;
      c.parameters = static_cast<std::uint64_t>(a.parameters);
      c.compare_butterfly = first;  // the same P participants for every R
      const auto res = sim::run_replicated_allreduce(c);
      if (first) {
        butterfly = res.butterfly_s, planner = res.planner_s, moshpit = res.moshpit_s;
        moshpit_group = res.moshpit_group_size, moshpit_rounds = res.moshpit_rounds;
      }
      first = false;
      Json row = {{"groups", g}, {"replicas", r}, {"election_s", res.election_s}, {"step_s", res.step_s},
                  {"butterfly_s", butterfly}, {"planner_s", planner}, {"moshpit_s", moshpit},
                  {"moshpit_group_size", moshpit_group}, {"moshpit_rounds", moshpit_rounds}, {"rounds", Json::array()}};
      const double none = res.rounds.front().round_s;
      auto record = [&](const sim::ReplicaRoundRecord& rec, const std::string& label) {
        if (!a.json)
          std::printf("%6u %3lld | %-8s %8.2f %+7.1f%% %8.3f %9s %9.1f %10.2f | %9.2f %8.2f %8.2f\n", rec.groups,
                      static_cast<long long>(r), label.c_str(), rec.round_s, 100 * (rec.round_s / none - 1),
                      rec.min_fraction_averaged,
                      rec.took_over_at ? ("step " + std::to_string(*rec.took_over_at)).c_str() : "-",
                      static_cast<double>(rec.lost_chunk_bytes) / 1e6,
                      static_cast<double>(rec.replication_bytes) / static_cast<double>(rec.bytes_sent), butterfly, planner,
                      moshpit);
        return Json{{"failure", label},
                    {"groups", rec.groups},
                    {"weight", rec.weight},
                    {"round_s", rec.round_s},
                    {"replicated_s", rec.replicated_s},
                    {"min_fraction_averaged", rec.min_fraction_averaged},
                    {"took_over_at", rec.took_over_at ? Json(*rec.took_over_at) : Json(nullptr)},
                    {"lost_chunk_bytes", rec.lost_chunk_bytes},
                    {"bytes_sent", rec.bytes_sent},
                    {"replication_bytes", rec.replication_bytes},
                    {"completed", rec.completed}};
      };
      for (const auto& rec : res.rounds) row["rounds"].push_back(record(rec, std::string(sim::name(rec.failure))));
      if (res.after_group_loss) row["after_group_loss"] = record(*res.after_group_loss, "requeued");
      rows.push_back(row);
    }
  }
  if (a.json) std::cout << Json{{"rows", rows}}.dump(2) << "\n";
  return kExitOk;
}

const bool allreduce_registered = register_command(
    "allreduce", "Hydra's fault-tolerant all-reduce over Raft replica groups, beside butterfly, the planner and Moshpit",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<AllReduceArgs>();
      sub.add_option("--groups", args->groups, "participants P (any count; beyond a power of two, extras are folded in)")->delimiter(',')->capture_default_str();
      sub.add_option("--replicas", args->replicas, "replicas per participant R")->delimiter(',')->capture_default_str();
      sub.add_option("--backend", args->backend, "network model")->check(CLI::IsMember({"flow", "ns3"}))->capture_default_str();
      sub.add_option("--parameters", args->parameters, "gradient elements (fp16 on the wire)")->capture_default_str();
      sub.add_flag("--json", args->json, "print JSON instead of a table");
      return [args] { return run_allreduce(*args); };
    });

}  // namespace
}  // namespace swarmlab::cli
