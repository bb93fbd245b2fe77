// DHT coordination under churn, end to end in the simulator: what each member of a group takes
// its round's step to be, and whose state it keeps (docs/interpretations.md §26).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
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

using Labels = std::map<std::uint64_t, std::vector<std::pair<PeerId, std::uint64_t>>>;  // group id -> (member, step)

// What every member of every group named its round's step, in a run of `sc` with DHT coordination
// and every round simulated; `at_end` sees the swarm when the run ends.
Labels steps_named(const scenarios::Scenario& sc, const std::function<void(SimSwarm&)>& at_end) {
  SwarmOptions options;
  options.coordination = scenarios::Coordination::Dht;
  options.replay_rounds = false;
  Labels labels;
  SwarmHooks hooks;
  hooks.grouped = [&](PeerId peer, const core::matchmaking::Group& g, std::uint64_t step) {
    labels[g.group_id].emplace_back(peer, step);
  };
  SimSwarm swarm(sc, options, hooks);
  swarm.start();
  swarm.engine().run_until(sc.training.duration_s);
  at_end(swarm);
  return labels;
}

// The steps `sc` takes with every round simulated (run_training, its own coordination).
std::uint64_t steps_in_full(const scenarios::Scenario& sc) {
  TrainingRunConfig cfg;
  cfg.replay_rounds = false;
  return run_training(sc, cfg).steps;
}

TEST(TrainingDhtChurn, APureReducerNeverCallsAGroupsStepAheadOfItsSenders) {
  const scenarios::Scenario sc = scenarios::parse_scenario(kServerServingTwoGroups, "server.json");
  std::vector<bool> computes;
  const Labels labels = steps_named(sc, [&](SimSwarm& swarm) {
    for (PeerId p = 0; p < swarm.size(); ++p) computes.push_back(swarm.config(p).capacity.compute_sps > 0);
  });
  int served = 0;
  for (const auto& [id, members] : labels) {
    std::uint64_t senders = 0;
    for (const auto& [peer, step] : members)
      if (computes[peer]) senders = std::max(senders, step);
    for (const auto& [peer, step] : members) {
      if (computes[peer]) continue;
      ++served;
      EXPECT_LE(step, senders) << "group " << id;
    }
  }
  EXPECT_GT(served, 30);
}

TEST(TrainingDhtChurn, ACollaborationWhoseServerServesTwoGroupsInARowGoesOn) {
  const scenarios::Scenario sc = scenarios::parse_scenario(kServerServingTwoGroups, "server.json");
  EXPECT_GE(steps_in_full(sc), 50u);  // 19 when it stopped
}


// Seven peers: three leave (at 174, 282 and 289 s), one joins at 127 s behind a 4 Mb/s uplink.
// At 274.5 s p0, which had just finished round 15 with p2 and p3, formed a group with p1 and p5,
// which that round had left out and which still held step 14's state. p0 called the round 16 and
// they called it 15, and whatever it was called, the two sides came out of it with different
// states: p1 and p5 then loaded p0's whole state (180 MB each, with the newcomer's, from p0's
// 40 Mb/s uplink), and no step was taken from 290 s to 473 s (17 steps in 600 s). Members now
// announce the step of the state they hold, and every member leaves out those behind the newest
// (core/training/state_cohort.h): p1 and p5 load the one step they missed instead.
const char* kLeftOutPeersMeetTheNextRound = R"({
  "name": "random-churn", "seed": 59,
  "workload": {"model": "toy", "parameters": 15000000, "wire_precision": "fp16", "target_batch": 200},
  "peers": [
    {"name": "p0", "compute_sps": 10, "latency_ms": 25, "download_bps": 2e8, "upload_bps": 4e7},
    {"name": "p1", "compute_sps": 10, "latency_ms": 5, "bandwidth_bps": 5e7},
    {"name": "p2", "compute_sps": 10, "latency_ms": 25, "bandwidth_bps": 2e8, "leave_s": 282.352078},
    {"name": "p3", "compute_sps": 5, "latency_ms": 25, "bandwidth_bps": 1e8, "leave_s": 289.111238},
    {"name": "p4", "compute_sps": 20, "latency_ms": 45, "download_bps": 2e7, "upload_bps": 4e6, "join_s": 127.232219},
    {"name": "p5", "compute_sps": 20, "latency_ms": 25, "bandwidth_bps": 1e8},
    {"name": "p6", "compute_sps": 0, "latency_ms": 5, "bandwidth_bps": 2e8, "leave_s": 173.847807}
  ],
  "averaging": {"strategy": "ar"},
  "training": {"micro_batch": 2, "duration_s": 600, "state_bytes_per_parameter": 12,
               "metrics_interval_s": 60, "coordination": "dht"}
})";

TEST(TrainingDhtChurn, PeersThatMissedARoundAreLeftOutOfTheNextRoundsGroupAndCatchUp) {
  const scenarios::Scenario sc = scenarios::parse_scenario(kLeftOutPeersMeetTheNextRound, "left-out.json");
  std::uint64_t left_behind = 0;
  const Labels labels = steps_named(sc, [&](SimSwarm& swarm) {
    for (PeerId p = 0; p < swarm.size(); ++p)
      if (swarm.is_up(p)) left_behind += swarm.peer(p)->left_behind();
  });
  for (const auto& [id, members] : labels) {
    std::set<std::uint64_t> trainers;  // the steps its members that train named
    for (const auto& [peer, step] : members)
      if (peer != 6) trainers.insert(step);  // p6 is the CPU-only reducer
    EXPECT_LE(trainers.size(), 1u) << "group " << id;
  }
  EXPECT_GT(left_behind, 0u);

  EXPECT_GE(steps_in_full(sc), 25u);  // 17 when they averaged with p0
}

// Eight peers: p2 leaves at 140 s, p3 loads the state until 191 s and the CPU-only p5 joins at
// 179 s. A round of 50 s (15 M parameters over 10-20 Mb/s uplinks) took step 4 for p0, p1, p6 and
// p7 from 177 s to 226 s. Meanwhile p3 and p5, left out of it, took step 4 on their own at 221 s
// (p3's search had timed out). When the four came out of their round, p3's record was the only
// other one at step 4 they had read: one against one, the tie went to p3's lineage, and all four
// began loading p3's state while p3, reading theirs, loaded p6's. Nobody then held a state the
// others would keep, and no step was taken from 221 s to the end (4 steps in 600 s). The senders
// of a peer's last round now count as holding its state until their records say otherwise.
const char* kTwoGroupsTakeOneStep = R"({
  "name": "random-churn", "seed": 173,
  "workload": {"model": "toy", "parameters": 15000000, "wire_precision": "fp16", "target_batch": 80},
  "peers": [
    {"name": "p0", "compute_sps": 10, "latency_ms": 25, "bandwidth_bps": 5e7},
    {"name": "p1", "compute_sps": 10, "latency_ms": 45, "download_bps": 2e7, "upload_bps": 1e7},
    {"name": "p2", "compute_sps": 20, "latency_ms": 45, "download_bps": 2e8, "upload_bps": 1e8, "leave_s": 139.540586},
    {"name": "p3", "compute_sps": 5, "latency_ms": 5, "bandwidth_bps": 2e7, "join_s": 44.125612},
    {"name": "p4", "compute_sps": 10, "latency_ms": 45, "bandwidth_bps": 2e8, "join_s": 282.768669, "leave_s": 496.239665},
    {"name": "p5", "compute_sps": 0, "latency_ms": 25, "bandwidth_bps": 5e7, "join_s": 178.729945, "leave_s": 361.24557},
    {"name": "p6", "compute_sps": 20, "latency_ms": 25, "download_bps": 5e7, "upload_bps": 1e7},
    {"name": "p7", "compute_sps": 10, "latency_ms": 5, "bandwidth_bps": 2e7}
  ],
  "averaging": {"strategy": "ar"},
  "training": {"micro_batch": 2, "duration_s": 600, "state_bytes_per_parameter": 12,
               "metrics_interval_s": 60, "coordination": "dht"}
})";

TEST(TrainingDhtChurn, TheLargerOfTwoGroupsThatTookOneStepKeepsItsState) {
  const scenarios::Scenario sc = scenarios::parse_scenario(kTwoGroupsTakeOneStep, "two-groups.json");
  SwarmOptions options;
  options.coordination = scenarios::Coordination::Dht;
  options.replay_rounds = false;
  std::vector<PeerId> loads_from_p3;  // who began loading p3's state before 240 s
  SimSwarm* running = nullptr;
  SwarmHooks hooks;
  hooks.sync_started = [&](PeerId peer, PeerId provider) {
    if (provider == 3 && running->engine().now() < 240) loads_from_p3.push_back(peer);
  };
  SimSwarm swarm(sc, options, hooks);
  running = &swarm;
  swarm.start();
  swarm.engine().run_until(sc.training.duration_s);
  EXPECT_TRUE(loads_from_p3.empty()) << loads_from_p3.size() << " peers loaded the smaller group's state";

  EXPECT_GE(steps_in_full(sc), 9u);  // 4 when they did
}

}  // namespace
}  // namespace swarmlab::sim
