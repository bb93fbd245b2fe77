// swarmlab groupsize: the Moshpit group size that minimises the expected rounds to the global
// average for n peers failing with probability p per round (core/moshpit/README.md has the model).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "core/moshpit/group_size.h"

namespace swarmlab::cli {
namespace {

struct GroupsizeArgs {
  std::int64_t peers = 0;
  double failure_rate = 0.0;
  bool json = false;
};

int run_groupsize(const GroupsizeArgs& a) {
  if (a.peers < 2) {
    std::cerr << "swarmlab groupsize: --peers must be at least 2, got " << a.peers << "\n";
    return kExitBadInput;
  }
  if (!(a.failure_rate >= 0.0 && a.failure_rate < 1.0)) {
    std::cerr << "swarmlab groupsize: --failure-rate must be in [0, 1), got " << a.failure_rate << "\n";
    return kExitBadInput;
  }
  const auto choice = core::moshpit::choose_group_size(static_cast<std::uint64_t>(a.peers), a.failure_rate);
  if (a.json) {
    using Json = nlohmann::ordered_json;
    auto option = [](const core::moshpit::GroupSizeOption& o) {
      return Json{{"group_size", o.group_size}, {"expected_rounds", o.expected_rounds}};
    };
    Json out = option(choice.best);
    out["runner_up"] = choice.runner_up ? option(*choice.runner_up) : Json(nullptr);
    std::cout << out.dump() << "\n";
    return kExitOk;
  }
  const auto shape = core::moshpit::grid_shape(static_cast<std::uint64_t>(a.peers), choice.best.group_size);
  char line[256];
  std::snprintf(line, sizeof line, "peers %lld, failure rate %g per peer per round\n",
                static_cast<long long>(a.peers), a.failure_rate);
  std::cout << line;
  std::snprintf(line, sizeof line, "group size %llu (%llu round%s without failures): expected %.6g rounds\n",
                static_cast<unsigned long long>(choice.best.group_size), static_cast<unsigned long long>(shape.dims),
                shape.dims == 1 ? "" : "s", choice.best.expected_rounds);
  std::cout << line;
  if (choice.runner_up) {
    std::snprintf(line, sizeof line, "runner-up: group size %llu: expected %.6g rounds\n",
                  static_cast<unsigned long long>(choice.runner_up->group_size), choice.runner_up->expected_rounds);
    std::cout << line;
  } else {
    std::cout << "runner-up: none (only one choice)\n";
  }
  return kExitOk;
}

const bool groupsize_registered = register_command(
    "groupsize", "Choose the Moshpit group size for N peers failing with probability P per round",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<GroupsizeArgs>();
      sub.add_option("--peers", args->peers, "number of peers N (at least 2)")
          ->required()
          ->check(Count(2, 1'000'000'000'000'000ull, "a number of peers"));
      sub.add_option("--failure-rate", args->failure_rate, "per-peer, per-round failure probability P in [0, 1)")
          ->required()
          ->check(Real(0, 1, "a probability (below 1)"));
      sub.add_flag("--json", args->json, "print JSON instead of text");
      return [args] { return run_groupsize(*args); };
    });

}  // namespace
}  // namespace swarmlab::cli
