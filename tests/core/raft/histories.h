#pragma once
// Randomized histories: a Raft group serving key-value clients while, seeded, servers crash and
// restart (leaders included), the network partitions and heals, and messages are lost, duplicated,
// delayed and reordered; in some histories the leader also replaces lost replicas with the next
// candidates. At the end the faults stop and the clients finish, and the run is judged:
//
// - no safety violation (one leader per term, same entry at the same index everywhere, every new
//   leader holds every entry applied so far, no timers left by a crashed node);
// - the clients' history is linearizable;
// - the group recovered: a leader, and every running member applied the same log.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster.h"

namespace swarmlab::core::raft::testing {

struct HistorySpec {
  Seconds workload = 3.0;  // clients issue operations (and faults happen) this long
  Seconds recovery = 2.0;  // then faults stop and the clients finish
  Seconds fault_gap_min = 0.05, fault_gap_max = 0.3;
};

struct HistoryOutcome {
  std::vector<std::string> problems;  // empty: the history passed
  std::uint64_t ops = 0, completed = 0, crashes = 0, partitions = 0, leader_changes = 0;
  std::uint64_t messages = 0, dropped = 0, duplicated = 0, snapshots_installed = 0, membership_changes = 0;
};

inline HistoryOutcome run_history(std::uint64_t seed, const HistorySpec& spec) {
  Rng rng(seed, 0xC0FFEE);
  ClusterOptions o;
  o.seed = seed;
  o.clients = 3;
  const int variant = static_cast<int>(seed % 4);
  o.servers = variant == 1 ? 3 : 5;
  if (variant == 2) o.members = {0, 1, 2};  // servers 3 and 4 are candidates for replacement
  const double drops[] = {0, 0.02, 0.05, 0.15};
  o.faults.drop = drops[rng.below(4)];
  o.faults.duplicate = rng.bernoulli(0.5) ? 0.05 : 0;
  o.faults.min_delay = 0.001;
  o.faults.max_delay = 0.003 + 0.02 * rng.uniform();
  o.faults.fifo = variant != 3 && rng.bernoulli(0.5);
  o.raft.snapshot_threshold = 4 + rng.below(28);
  const std::size_t batches[] = {1, 2, 4, 64};
  o.raft.max_entries_per_message = batches[rng.below(4)];
  if (variant == 2) {
    o.raft.target_size = 3;
    o.raft.replace_after = 0.2 + 0.3 * rng.uniform();
    o.raft.catch_up_timeout = 1.0;
    o.raft.candidate_retry_after = 1.0;
  }
  Cluster c(o);
  if (variant == 2)
    for (PeerId p = 0; p < c.servers(); ++p) c.node(p)->set_candidates({0, 1, 2, 3, 4});

  HistoryOutcome out;
  for (std::size_t i = 0; i < c.clients(); ++i) c.client(i).run_workload(spec.workload);

  // The fault schedule: actions at random times; each fault is undone a little later.
  std::vector<std::pair<Seconds, std::function<void()>>> actions;
  // Replacement needs a leader that lasts: histories with replacement have half the fault rate.
  const double stretch = variant == 2 ? 2.0 : 1.0;
  for (Seconds t = spec.fault_gap_min; t < spec.workload;
       t += stretch * (spec.fault_gap_min + (spec.fault_gap_max - spec.fault_gap_min) * rng.uniform())) {
    // Weights: crash the leader 3, crash a server 2, crash two 1, split 2, isolate the leader 2,
    // loss burst 1.
    static constexpr int kKinds[] = {0, 0, 0, 1, 1, 5, 2, 2, 3, 3, 4};
    const int kind = kKinds[rng.below(std::size(kKinds))];
    const Seconds undo = t + 0.01 + 0.6 * rng.uniform();
    const PeerId victim = static_cast<PeerId>(rng.below(c.servers()));
    const std::uint64_t pick = rng.next_u64();
    switch (kind) {
      case 0:  // crash the leader (if any), restart it later
      case 1:  // crash a random server
      case 5:  // crash the leader and another server at once
        actions.push_back({t, [&c, kind, victim, pick, undo, &actions, &out] {
                             std::vector<PeerId> down = {victim};
                             if (kind != 1) {
                               if (auto l = c.leader()) down[0] = *l;
                             }
                             if (kind == 5) down.push_back(static_cast<PeerId>((down[0] + 1 + pick % (c.servers() - 1)) % c.servers()));
                             for (PeerId p : down) {
                               if (!c.is_up(p)) continue;
                               c.crash(p);
                               ++out.crashes;
                               actions.push_back({undo, [&c, p] { c.restart(p); }});
                             }
                           }});
        break;
      case 2:  // partition the servers in two
      case 3: {  // isolate the leader (or a random server)
        actions.push_back({t, [&c, kind, victim, pick, undo, &actions, &out] {
                             std::vector<PeerId> a, b;
                             PeerId lonely = victim;
                             if (kind == 3) {
                               if (auto l = c.leader()) lonely = *l;
                             }
                             for (PeerId p = 0; p < c.servers(); ++p) {
                               const bool left = kind == 2 ? ((pick >> p) & 1) : p == lonely;
                               (left ? a : b).push_back(p);
                             }
                             // Clients reach everyone: only server-to-server links are cut.
                             for (PeerId x : a)
                               for (PeerId y : b) c.net().set_blocked(x, y, true);
                             ++out.partitions;
                             actions.push_back({undo, [&c] { c.net().heal(); }});
                           }});
        break;
      }
      case 4: {  // a burst of heavy loss on every link
        actions.push_back({t, [&c, undo, &actions] {
                             LinkFaults f = c.net().faults();
                             const LinkFaults before = f;
                             f.drop = 0.5;
                             c.net().set_faults(f);
                             actions.push_back({undo, [&c, before] { c.net().set_faults(before); }});
                           }});
        break;
      }
    }
  }
  if (variant == 2) {
    // A replica lost for good (until the recovery): the leader should replace it.
    const PeerId lost = static_cast<PeerId>(rng.below(c.servers()));
    actions.push_back({0.2 + 1.3 * rng.uniform(), [&c, lost, &out] {
                         if (!c.is_up(lost)) return;
                         c.crash(lost);
                         ++out.crashes;
                       }});
  }
  // Run the schedule in time order (actions may add later actions).
  for (std::size_t done = 0;;) {
    auto next = std::min_element(actions.begin() + static_cast<std::ptrdiff_t>(done), actions.end(),
                                 [](const auto& x, const auto& y) { return x.first < y.first; });
    if (next == actions.end()) break;
    std::iter_swap(actions.begin() + static_cast<std::ptrdiff_t>(done), next);
    auto [at, fn] = std::move(actions[done]);
    ++done;
    c.run_until(at);
    fn();
  }

  // Recovery: everything healed and running, no more faults.
  c.run_until(spec.workload);
  c.net().heal();
  c.net().set_faults({0, 0, o.faults.min_delay, o.faults.max_delay, o.faults.fifo});
  for (PeerId p = 0; p < c.servers(); ++p) c.restart(p);
  c.drain_clients(spec.recovery);

  for (const auto& v : c.violations()) out.problems.push_back(v);
  std::string why;
  if (!c.linearizable(&why)) out.problems.push_back("not linearizable: " + why);
  if (const std::string conv = c.convergence(); !conv.empty()) out.problems.push_back("no recovery: " + conv);
  for (std::size_t i = 0; i < c.clients(); ++i)
    if (c.client(i).busy()) out.problems.push_back("client " + std::to_string(i) + " still waiting after recovery");
  out.ops = c.history().size();
  out.completed = c.completed_ops();
  out.leader_changes = c.elections().size();
  out.messages = c.net().stats().sent;
  out.dropped = c.net().stats().dropped;
  out.duplicated = c.net().stats().duplicated;
  for (PeerId p = 0; p < c.servers(); ++p) out.snapshots_installed += c.node(p)->stats().snapshots_installed;
  out.membership_changes = c.config_changes();
  return out;
}

// Runs `count` histories from `first_seed`; returns the failures (at most 10 described).
struct SweepOutcome {
  std::vector<std::string> failures;
  HistoryOutcome totals;
  std::size_t histories = 0;
};

inline SweepOutcome run_sweep(std::uint64_t first_seed, std::size_t count, const HistorySpec& spec) {
  SweepOutcome s;
  for (std::uint64_t seed = first_seed; seed < first_seed + count; ++seed) {
    HistoryOutcome h = run_history(seed, spec);
    ++s.histories;
    if (!h.problems.empty() && s.failures.size() < 10) s.failures.push_back("seed " + std::to_string(seed) + ": " + h.problems[0]);
    s.totals.ops += h.ops;
    s.totals.completed += h.completed;
    s.totals.crashes += h.crashes;
    s.totals.partitions += h.partitions;
    s.totals.leader_changes += h.leader_changes;
    s.totals.messages += h.messages;
    s.totals.dropped += h.dropped;
    s.totals.duplicated += h.duplicated;
    s.totals.snapshots_installed += h.snapshots_installed;
    s.totals.membership_changes += h.membership_changes;
  }
  return s;
}

}  // namespace swarmlab::core::raft::testing
