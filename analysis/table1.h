#pragma once
// DeDLOC Table 1 (docs/dedloc.md §6): ResNet-50 averaging time per round for AR, PS and the planner
// on setups A-D, simulated from the shipped scenarios and set beside the paper's figures; on request
// also Hydra's halving-doubling all-reduce on the same setups (docs/hydra.md §5; no published figure).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiments/averaging_experiment.h"
#include "sim/experiments/run_cost.h"

namespace swarmlab::analysis {

struct Table1Cell {
  double simulated_s = 0;
  double paper_s = 0;
  double relative_error() const { return (simulated_s - paper_s) / paper_s; }
};

struct Table1Row {
  std::string setup;                // "A".."D"
  std::string scenario_path;
  std::array<Table1Cell, 3> cells;  // AR, PS, Ours
  std::string ps_peer;              // the peer PS used
  std::vector<double> ours_fractions;
  std::optional<double> hd_s;       // halving-doubling, when asked for
};

struct Table1Options {
  std::string backend = "flow";
  std::uint32_t rounds = 3;
  // Rounds run first and left out of the mean: the paper's figures are means over a long run on
  // open connections, so a packet-level backend's handshakes and slow start must not count.
  std::uint32_t warmup_rounds = 1;
  bool halving_doubling = false;  // a fourth column: strategy "hd" on the same setups
  std::string scenario_dir;   // holds A.json .. D.json
  sim::TransportAssumptions transport;
  sim::RunBudget budget;      // every cell's estimated cost must fit (sim/experiments/run_cost.h)
  std::function<void(std::size_t done, std::size_t total)> on_cell;
};

struct Table1Report {
  std::string backend;
  std::uint32_t rounds = 0;
  std::uint32_t warmup_rounds = 0;
  std::vector<Table1Row> rows;
  nlohmann::ordered_json assumptions;
};

// The paper's figures, seconds per averaging round: {AR, PS, Ours} for A, B, C, D.
const std::array<std::array<double, 3>, 4>& table1_paper();

// Loads and checks all four setups before simulating any (core::InputError, exit 2: a setup that is
// not a collaboration, setups that do not share the workload, part size and latency, a run past the
// budget), then runs the 12 cells.
Table1Report run_table1(const Table1Options& options);
nlohmann::ordered_json to_json(const Table1Report& report);
std::string to_text(const Table1Report& report);

}  // namespace swarmlab::analysis
