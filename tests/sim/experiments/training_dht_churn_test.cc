// DHT coordination under churn, end to end in the simulator: what each member of a group takes
// its round's step to be (docs/interpretations.md §26).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"
#include "sim/scenario/swarm.h"

namespace swarmlab::sim {
namespace {

// Three GPUs from the start, four more and a CPU-only parameter server joining, no departures.
// At 232 s the server finished round 19 for three of them and at once joined the group of the
// three it had left out, who were still taking step 19. Counting its own rounds, it called that
// round step 20: no peer holding a state ever reached step 20, so every GPU peer, seeing the
// collaboration at 20, waited to load it from nobody, and the collaboration stopped for good at
// step 19 (19 steps in 600 s). A pure reducer whose group's senders were none of its last group's
// now takes the step after the newest one a peer holding a state reached. (The name seeds the DHT's keys, so it is kept as the generator of
// ReplayUnderChurn wrote it: another name takes another path.)
const char* kServerServingTwoGroups = R"({
  "name": "random-churn", "seed": 62,
  "workload": {"model": "toy", "parameters": 5000000, "wire_precision": "fp16", "target_batch": 200},
  "peers": [
    {"name": "p0", "compute_sps": 10, "latency_ms": 5, "bandwidth_bps": 1e8},
    {"name": "p1", "compute_sps": 10, "latency_ms": 45, "bandwidth_bps": 2e7},
    {"name": "p2", "compute_sps": 10, "latency_ms": 25, "download_bps": 2e8, "upload_bps": 1e8},
    {"name": "p3", "compute_sps": 20, "latency_ms": 25, "bandwidth_bps": 1e8, "join_s": 69.253237},
    {"name": "p4", "compute_sps": 0, "latency_ms": 5, "bandwidth_bps": 2e7, "join_s": 87.622711},
    {"name": "p5", "compute_sps": 10, "latency_ms": 45, "bandwidth_bps": 2e8, "join_s": 150.129845},
    {"name": "p6", "compute_sps": 5, "latency_ms": 25, "bandwidth_bps": 2e7, "join_s": 100.880434},
    {"name": "p7", "compute_sps": 20, "latency_ms": 5, "bandwidth_bps": 2e7, "join_s": 201.151532}
  ],
  "averaging": {"strategy": "ps"},
  "training": {"micro_batch": 2, "duration_s": 600, "state_bytes_per_parameter": 12,
               "metrics_interval_s": 60, "coordination": "dht"}
})";

TEST(TrainingDhtChurn, APureReducerNeverCallsAGroupsStepAheadOfItsSenders) {
  const scenarios::Scenario sc = scenarios::parse_scenario(kServerServingTwoGroups, "server.json");
  SwarmOptions options;
  options.coordination = scenarios::Coordination::Dht;
  options.replay_rounds = false;
  std::map<std::uint64_t, std::vector<std::pair<PeerId, std::uint64_t>>> labels;  // group id -> (member, step)
  SwarmHooks hooks;
  hooks.grouped = [&](PeerId peer, const core::matchmaking::Group& g, std::uint64_t step) {
    labels[g.group_id].emplace_back(peer, step);
  };
  SimSwarm swarm(sc, options, hooks);
  swarm.start();
  swarm.engine().run_until(sc.training.duration_s);
  int served = 0;
  for (const auto& [id, members] : labels) {
    std::uint64_t senders = 0;
    for (const auto& [peer, step] : members)
      if (swarm.config(peer).capacity.compute_sps > 0) senders = std::max(senders, step);
    for (const auto& [peer, step] : members) {
      if (swarm.config(peer).capacity.compute_sps > 0) continue;
      ++served;
      EXPECT_LE(step, senders) << "group " << id;
    }
  }
  EXPECT_GT(served, 30);
}

TEST(TrainingDhtChurn, ACollaborationWhoseServerServesTwoGroupsInARowGoesOn) {
  TrainingRunConfig cfg;
  cfg.replay_rounds = false;
  const TrainingRunResult r =
      run_training(scenarios::parse_scenario(kServerServingTwoGroups, "server.json"), cfg);
  EXPECT_GE(r.steps, 50u);  // 19 when it stopped
}

}  // namespace
}  // namespace swarmlab::sim
