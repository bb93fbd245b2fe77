#pragma once
// The kill/spawn stress run (issue 12), shared by the default test (60 s of churn) and the slow one
// (10 minutes): scenarios/live/fashion-mnist-churn.json, eight training peers of which the first two
// are backbones, while the launcher SIGKILLs a random peer or starts one again every 2-10 s
// (exec/random_churn.h), the first peer and the backbones included, one backbone always up. Each
// peer is given only the backbones' addresses and learns the others' (exec/address_directory.h).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <deque>
#include <fstream>
#include <string>

#include "exec/launcher.h"
#include "live_swarm.h"

namespace swarmlab::exec::testing {

// The last lines of the log of every peer whose last incarnation neither left cleanly nor was
// killed by the churn: the temporary directory is gone when a CI run reports the failure.
inline std::string failed_peer_logs(const LaunchResult& r) {
  std::string text;
  for (std::size_t i = 0; i < r.exit_codes.size(); ++i) {
    if (r.exit_codes[i] == 0 || r.exit_codes[i] == 128 + SIGKILL) continue;
    std::ifstream in(r.out_dir + "/peer-" + std::to_string(i) + ".log");
    std::deque<std::string> tail;
    for (std::string line; std::getline(in, line);) {
      tail.push_back(line);
      if (tail.size() > 40) tail.pop_front();
    }
    text += "\npeer " + std::to_string(i) + " exited with " + std::to_string(r.exit_codes[i]) + "; its log ends:\n";
    for (const auto& line : tail) text += "  " + line + "\n";
  }
  return text;
}

inline void run_kill_spawn_stress(double churn_s, const std::string& model, std::uint64_t seed) {
  TempDir dir;
  LaunchOptions o = test_launch(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/live/fashion-mnist-churn.json", dir.path);
  TrainLaunch t;
  t.model = model;
  t.steps = 10000000;  // the churn ends the run, not a step
  t.evaluate_every = 0;
  o.train = t;
  RandomChurnSpec churn;
  churn.from_s = 10;
  churn.until_s = churn.from_s + churn_s;
  churn.backbones = 2;
  churn.calm_s = 15;
  churn.seed = seed;
  o.churn = churn;
  o.bootstrap_peers = 2;  // every incarnation starts from the backbones' addresses only
  o.deadline_s = churn.until_s + churn.calm_s + churn.grace_s + 60;
  const LaunchResult r = launch(o);
  ASSERT_TRUE(r.training.has_value());
  const TrainingSummary& s = *r.training;
  // Every incarnation's exit code, the ledger, per-step consistency, identical survivors.
  EXPECT_TRUE(r.ok) << failed_peer_logs(r);
  EXPECT_FALSE(r.timed_out);
  std::size_t killed = 0, survivors = 0;
  for (const auto& p : s.peers) {
    killed += p.killed;
    survivors += p.final_hash.has_value();
    EXPECT_TRUE(p.samples.balanced) << "peer " << p.peer << ", see " << dir.path;
  }
  EXPECT_GE(killed, 2u);
  EXPECT_GE(r.restarts, 1u);
  EXPECT_GE(survivors, 3u);  // the churn never leaves fewer up
  // Every computed sample is in a step, discarded, still accumulated at exit, or lost with a
  // killed incarnation; none twice.
  EXPECT_TRUE(s.samples.balanced);
  EXPECT_EQ(s.samples.computed, s.samples.contributed + s.samples.discarded + s.samples.accumulated + s.samples.lost);
  // Peers with the same lineage hold the same parameters at every step, and all survivors hold
  // the same parameters at the end.
  EXPECT_TRUE(s.consistent);
  EXPECT_TRUE(s.survivors_identical) << "see " << dir.path;
  // The collaboration never stalls for a minute.
  ASSERT_GE(s.steps.size(), 5u);
  EXPECT_LT(s.longest_stall_s, 60.0) << "see " << dir.path;
  // Nor between its last step and when the peers were asked to leave (times from the launch).
  EXPECT_GT(s.steps.back().time_s, churn.until_s + churn.calm_s - 60.0) << "see " << dir.path;
  std::printf("%zu steps, %zu incarnations killed, %zu restarts, %zu diverged step reports, longest stall %.1f s; "
              "samples: %llu computed, %llu in steps, %llu discarded, %llu lost, %llu accumulated\n",
              s.steps.size(), killed, r.restarts, s.diverged_reports, s.longest_stall_s,
              static_cast<unsigned long long>(s.samples.computed), static_cast<unsigned long long>(s.samples.contributed),
              static_cast<unsigned long long>(s.samples.discarded), static_cast<unsigned long long>(s.samples.lost),
              static_cast<unsigned long long>(s.samples.accumulated));
}

}  // namespace swarmlab::exec::testing
