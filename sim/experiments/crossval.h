#pragma once
// Cross-validation of the network backends: a fixed suite of small scenarios, each run on the
// fluid model and on packet-level TCP (ns-3), timed the same way on both. Where they disagree, the
// README's "Notes on fidelity" says why.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace swarmlab::sim {

struct CrossvalCase {
  std::string name;
  std::string description;
  double flow_s = 0;     // completion time on the fluid model
  double ns3_s = 0;      // ... on ns-3
  double flow_cpu_s = 0;  // processor time each backend took (on the first row of a case)
  double ns3_cpu_s = 0;
  double relative_difference() const { return (ns3_s - flow_s) / flow_s; }
};

struct CrossvalReport {
  std::vector<CrossvalCase> cases;
};

struct CrossvalOptions {
  std::string scenario_dir;  // holds A.json and C.json of Table 1 (the butterfly cases)
  std::function<void(std::size_t done, std::size_t total)> on_case;
};

CrossvalReport run_crossval(const CrossvalOptions& options);
nlohmann::ordered_json to_json(const CrossvalReport& report);
std::string to_text(const CrossvalReport& report);

}  // namespace swarmlab::sim
