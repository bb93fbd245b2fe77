// swarmlab moshpit: Moshpit group averaging on random vectors, against an all-reduce that restarts
// on any failure and against random groups (sim/experiments/moshpit_experiment.h).
//
// --json prints {"rounds_to_target": {"moshpit": r, "allreduce_restart": r, "random_groups": r},
// "per_round": [{"round": t, "moshpit_mse": e, "allreduce_restart_mse": e, "random_groups_mse": e}]}
// where r is null if the target was not reached within --rounds, and the *_mse fields hold the
// relative error sqrt(Σ‖x_i − x̄‖² / Σ‖x_i(0) − x̄‖²) (not a mean squared error). Output depends
// only on the arguments: the same seed gives byte-identical output.
#include <cstdint>
#include <iostream>
#include <memory>

#include "cli/checks.h"
#include "cli/command.h"
#include "sim/experiments/moshpit_experiment.h"

namespace swarmlab::cli {
namespace {

struct MoshpitArgs {
  std::int64_t peers = 0;
  std::int64_t group_size = 0;
  double failure_rate = 0.0;
  std::int64_t rounds = 0;
  std::uint64_t seed = 0;
  std::int64_t dim = 64;
  double target = 1e-9;
  bool json = false;
  sim::RunBudget budget;
};

int run_moshpit(const MoshpitArgs& a) {
  // Negative counts would wrap in the unsigned config; name them here.
  struct Count {
    const char* flag;
    std::int64_t value, least;
  };
  for (const Count& c : {Count{"--peers", a.peers, 2}, Count{"--group-size", a.group_size, 2},
                         Count{"--rounds", a.rounds, 1}, Count{"--dim", a.dim, 1}})
    if (c.value < c.least) {
      std::cerr << "swarmlab moshpit: " << c.flag << " must be at least " << c.least << ", got " << c.value << "\n";
      return kExitBadInput;
    }
  // Work: three methods, each touching every value of every peer every round.
  const double work = 3.0 * static_cast<double>(a.rounds) * static_cast<double>(a.peers) * static_cast<double>(a.dim);
  sim::check_budget({work, 3.0 * static_cast<double>(a.peers) * static_cast<double>(a.dim) * 8 * 4,
                     std::to_string(a.rounds) + " rounds x " + std::to_string(a.peers) + " peers x " +
                         std::to_string(a.dim) + " values, three methods"},
                    a.budget, "command line", "--rounds, --peers, --dim");
  sim::MoshpitConfig config;
  config.peers = static_cast<std::uint64_t>(a.peers);
  config.group_size = static_cast<std::uint64_t>(a.group_size);
  config.failure_rate = a.failure_rate;
  config.rounds = static_cast<std::uint64_t>(a.rounds);
  config.seed = a.seed;
  config.dim = static_cast<std::size_t>(a.dim);
  config.target = a.target;
  const auto result = sim::run_moshpit_experiment(config);  // std::invalid_argument → exit 2
  std::cout << (a.json ? sim::moshpit_json(result) : sim::moshpit_text(result));
  return kExitOk;
}

const bool moshpit_registered = register_command(
    "moshpit", "Simulate Moshpit averaging against all-reduce with restarts and random groups",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<MoshpitArgs>();
      sub.add_option("--peers", args->peers, "number of peers N")->required()->check(Count(2, 0xFFFFFFFFull, "a number of peers"));
      sub.add_option("--group-size", args->group_size, "group size m (the grid side is at most m)")
          ->required()
          ->check(Count(2, 0xFFFFFFFFull, "a group size"));
      sub.add_option("--rounds", args->rounds, "rounds to simulate")->required()->check(Count(1, 10'000'000, "a number of rounds"));
      sub.add_option("--seed", args->seed, "random seed")->required()->check(Seed());
      sub.add_option("--dim", args->dim, "vector dimension")
          ->check(Count(1, 1ull << 28, "a vector dimension"))
          ->capture_default_str();
      sub.add_option("--target", args->target, "relative error to reach")
          ->check(Positive(1, "a relative error"))
          ->capture_default_str();
      sub.add_option("--failure-rate", args->failure_rate, "per-peer, per-round failure probability in [0, 1)")
          ->required()
          ->check(Real(0, 1, "a probability (below 1)"));
      add_budget_options(sub, args->budget);
      sub.add_flag("--json", args->json, "print JSON instead of a table");
      return [args] { return run_moshpit(*args); };
    });

}  // namespace
}  // namespace swarmlab::cli
