#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/progress/global_progress.h"
#include "core/progress/peer_progress.h"
#include "core/progress/progress_tracker.h"
#include "core/wire.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::progress {
namespace {

TEST(PeerProgress, RoundTripsAndRejectsMalformed) {
  const PeerProgress p{7, 12, 345, 67.5, 1234.25, true, 0x0123456789abcdefULL};
  const auto bytes = encode_progress(p);
  EXPECT_EQ(decode_progress(bytes), p);

  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(decode_progress(std::span(bytes).first(n)), DecodeError) << "truncated to " << n;
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_THROW(decode_progress(trailing), DecodeError);
  auto bad_flag = bytes;
  bad_flag.back() = 2;
  EXPECT_THROW(decode_progress(bad_flag), DecodeError);
  auto bad_rate = p;
  bad_rate.samples_per_s = -1;
  EXPECT_THROW(decode_progress(encode_progress(bad_rate)), DecodeError);
  bad_rate.samples_per_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(decode_progress(encode_progress(bad_rate)), DecodeError);
}

TEST(GlobalProgress, FollowsTheFormulas) {
  // Peer 3 is a client at a later step: it does not define the global step. Peer 2 lags one step:
  // its speed counts, its samples do not.
  const std::vector<PeerProgress> records = {
      {0, 5, 100, 10, 10.0, false},
      {1, 5, 50, 20, 12.0, false},
      {2, 4, 900, 30, 11.0, false},
      {3, 9, 40, 40, 14.0, true},
  };
  const GlobalProgress g = aggregate(records, 13.0, StepTarget{1000});
  EXPECT_EQ(g.global_step, 5u);
  EXPECT_DOUBLE_EQ(g.estimated_samples, (100 + 3 * 10) + (50 + 1 * 20));
  EXPECT_DOUBLE_EQ(g.total_samples_per_s, 100);
  EXPECT_DOUBLE_EQ(g.eta_s, (1000.0 - 200) / 100);
  EXPECT_EQ(g.peers, 4u);
  EXPECT_EQ(g.clients, 1u);

  // A record from the future extrapolates nothing backwards; the target reached gives ETA 0.
  const std::vector<PeerProgress> done = {{0, 1, 600, 50, 20.0, false}, {1, 1, 500, 50, 10.0, false}};
  const GlobalProgress d = aggregate(done, 15.0, StepTarget{1000});
  EXPECT_DOUBLE_EQ(d.estimated_samples, 600 + 500 + 5 * 50);
  EXPECT_EQ(d.eta_s, 0);

  // Nobody trains: infinite ETA; the caller's own step is a floor.
  const GlobalProgress none = aggregate({}, 1.0, StepTarget{10}, 3);
  EXPECT_EQ(none.global_step, 3u);
  EXPECT_TRUE(std::isinf(none.eta_s));
  EXPECT_FALSE(none.ready);
}

// A peer alone at the new step (the others' records still at the last one: they are finishing
// the round, or have not published since) is due when the estimate made from the read said, not
// later: the others' speed is in the ETA, so their samples count from the read on. Without the read
// time, each re-estimate found only its own share done and the ETA receded (x0.8 per wake-up here).
TEST(GlobalProgress, PeersOneStepBehindCountFromTheReadSoTheEstimateDoesNotRecede) {
  const std::vector<PeerProgress> records = {
      {0, 5, 0, 300, 10.0, false},   // this peer, at the new step since t = 10 (300 samples/s)
      {1, 4, 400, 200, 9.9, false},  // a step behind: samples from the last step
      {2, 4, 200, 600, 9.9, false},
      {3, 4, 100, 400, 9.9, false},
      {4, 3, 100, 500, 9.9, false},  // two steps behind (loading state): speed only
  };
  const Seconds read = 10.0;
  const GlobalProgress at_read = aggregate(records, read, StepTarget{256}, 5, {}, read);
  EXPECT_DOUBLE_EQ(at_read.estimated_samples, 0);
  EXPECT_DOUBLE_EQ(at_read.eta_s, 256.0 / 2000);
  const GlobalProgress half = aggregate(records, read + at_read.eta_s / 2, StepTarget{256}, 5, {}, read);
  EXPECT_NEAR(half.estimated_samples, (300 + 200 + 600 + 400) * at_read.eta_s / 2, 1e-9);
  EXPECT_NEAR(half.eta_s, at_read.eta_s / 2 + 500 * at_read.eta_s / 2 / 2000, 1e-12);
  EXPECT_TRUE(aggregate(records, read + 256.0 / 1500 + 1e-9, StepTarget{256}, 5, {}, read).ready);
  // Without the read time peers behind count for nothing, as before: not due then.
  EXPECT_FALSE(aggregate(records, read + 256.0 / 1500 + 1e-9, StepTarget{256}, 5).ready);

  // Under a quota, a worker one step behind needs its whole quota after the read, then no more.
  StepTarget quota;
  quota.per_peer_quota = 100;
  const std::vector<PeerProgress> workers = {{0, 5, 100, 0, 10.0, false}, {1, 4, 100, 50, 9.9, false}};
  EXPECT_DOUBLE_EQ(aggregate(workers, read, quota, 5, {}, read).eta_s, 2.0);
  EXPECT_DOUBLE_EQ(aggregate(workers, read + 1.5, quota, 5, {}, read).eta_s, 0.5);
  EXPECT_TRUE(aggregate(workers, read + 2.0, quota, 5, {}, read).ready);
  EXPECT_DOUBLE_EQ(aggregate(workers, read + 2.0, quota, 5).eta_s, 2.0);  // without it: never due
}

TEST(GlobalProgress, AQuotaWaitsForEveryComputingPeerAtTheGlobalStep) {
  // Quota 100: peer 0 is in (it reports no speed any more), peer 1 needs (100 - 60) / 20 = 2 s,
  // peer 2 has 30 after 1 s of extrapolation and needs 70 / 10 = 7 s; peer 3 lags two steps (it
  // loads state) and peer 4 does not compute: neither counts.
  const std::vector<PeerProgress> records = {
      {0, 2, 100, 0, 10.0, false}, {1, 2, 60, 20, 10.0, false}, {2, 2, 20, 10, 9.0, false},
      {3, 0, 0, 50, 10.0, false},  {4, 2, 0, 0, 10.0, false},
  };
  StepTarget quota;
  quota.per_peer_quota = 100;
  const GlobalProgress g = aggregate(records, 10.0, quota);
  EXPECT_EQ(g.global_step, 2u);
  EXPECT_DOUBLE_EQ(g.eta_s, 7.0);
  EXPECT_DOUBLE_EQ(g.estimated_samples, 100 + 60 + 30);
  EXPECT_FALSE(g.ready);
  const GlobalProgress later = aggregate(records, 17.0, quota);
  EXPECT_TRUE(later.ready);
  EXPECT_DOUBLE_EQ(later.estimated_samples, 300);
  // A worker one step behind is finishing the last round: it will need its whole quota, 100 / 5 s.
  std::vector<PeerProgress> finishing = records;
  finishing.push_back({5, 1, 0, 5, 10.0, false});
  EXPECT_DOUBLE_EQ(aggregate(finishing, 17.0, quota).eta_s, 20.0);
}

TEST(GlobalProgress, AFormedGroupWaitsForItsOwnMembersQuotasOnly) {
  // Peer 2 left after the last round (its record still says it is finishing it) and this peer did
  // not see it dropped: the whole collaboration's estimate waits for it until the record expires,
  // a group formed without it does not. Peer 4 (no compute) is a member that counts for nothing.
  const std::vector<PeerProgress> records = {
      {0, 2, 0, 100, 10.0, false}, {1, 2, 0, 100, 10.0, false}, {2, 1, 0, 100, 2.0, false},
      {3, 2, 0, 50, 10.0, false},  {4, 2, 0, 0, 10.0, false},
  };
  StepTarget quota;
  quota.per_peer_quota = 1;
  const GlobalProgress everyone = aggregate(records, 11.0, quota);
  EXPECT_FALSE(everyone.ready);
  EXPECT_DOUBLE_EQ(everyone.eta_s, 0.01);
  const std::vector<PeerId> group = {0, 1, 3, 4};
  const GlobalProgress g = aggregate(records, 11.0, quota, 0, group);
  EXPECT_TRUE(g.ready);
  EXPECT_EQ(g.global_step, 2u);
  EXPECT_DOUBLE_EQ(g.estimated_samples, 3);
  // Its members still count: one of them short of its quota holds the group, 1 / 50 s.
  EXPECT_DOUBLE_EQ(aggregate(records, 10.0, quota, 0, group).eta_s, 0.02);
  // A pooled target is the collaboration's, whatever the group.
  EXPECT_EQ(aggregate(records, 11.0, StepTarget{1000}, 0, group).eta_s, aggregate(records, 11.0, StepTarget{1000}).eta_s);
}

TEST(ProgressTracker, RejectsBadConfig) {
  testing::DhtSwarm swarm({1, 1});
  EXPECT_THROW(ProgressTracker(swarm.env(0), *swarm.nodes[0], ProgressConfig{"", StepTarget{10}, 60, 30}), std::invalid_argument);
  EXPECT_THROW(ProgressTracker(swarm.env(0), *swarm.nodes[0], ProgressConfig{"r", StepTarget{0}, 60, 30}), std::invalid_argument);
  EXPECT_THROW(ProgressTracker(swarm.env(0), *swarm.nodes[0], ProgressConfig{"r", StepTarget{10}, 30, 30}), std::invalid_argument);
}

TEST(ProgressTracker, RecordsAreRefreshedAndExpire) {
  testing::DhtSwarm swarm({1, 1, 1, 1});
  auto a = std::make_unique<ProgressTracker>(swarm.env(1), *swarm.nodes[1], ProgressConfig{"run", StepTarget{100}, 30, 10});
  ProgressTracker b(swarm.env(2), *swarm.nodes[2], ProgressConfig{"run", StepTarget{100}, 30, 10});
  a->report({3, 40, 8});
  // Long after the first record would have expired, the refreshes keep it alive.
  swarm.run_for(100);
  std::optional<GlobalProgress> seen;
  b.fetch([&](const GlobalProgress& g) { seen = g; });
  swarm.run_for(5);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->peers, 1u);
  EXPECT_EQ(seen->global_step, 3u);
  EXPECT_GE(a->publishes(), 10u);

  // The peer leaves: its record expires within `expiration`.
  a.reset();
  swarm.run_for(31);
  seen.reset();
  b.fetch([&](const GlobalProgress& g) { seen = g; });
  swarm.run_for(5);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->peers, 0u);
}

// A peer a round dropped is left out of the view at once, not when its record expires; a record
// it publishes afterwards (it was only slow, or it restarted) brings it back.
TEST(ProgressTracker, APeerLeftOutIsIgnoredUntilItPublishesAgain) {
  testing::DhtSwarm swarm({1, 1, 1, 1});
  ProgressTracker a(swarm.env(1), *swarm.nodes[1], ProgressConfig{"run", StepTarget{100}, 60, 30});
  ProgressTracker b(swarm.env(2), *swarm.nodes[2], ProgressConfig{"run", StepTarget{100}, 60, 30});
  a.report({3, 40, 8});
  swarm.run_for(2);
  auto fetch = [&] {
    std::optional<GlobalProgress> seen;
    b.fetch([&](const GlobalProgress& g) { seen = g; });
    swarm.run_for(2);
    EXPECT_TRUE(seen);
    return seen ? seen->peers : 99u;
  };
  EXPECT_EQ(fetch(), 1u);
  b.leave_out(1);
  EXPECT_TRUE(b.others().empty());
  EXPECT_EQ(fetch(), 0u);  // its record is still in the DHT, published before it was left out
  swarm.run_for(1);
  a.report({4, 0, 8});
  swarm.run_for(2);
  EXPECT_EQ(fetch(), 1u);
  ASSERT_EQ(b.others().size(), 1u);
  EXPECT_EQ(b.others()[0].step, 4u);
}

// A collaboration of peers with different speeds. Each trains in batches (env.compute), reports
// after every batch and fetches; when the estimate reaches the target batch it takes a step, and
// peers that see a newer global step catch up (their samples towards the old step are dropped).
class Collaboration {
 public:
  static constexpr std::uint64_t kBatch = 32;
  static constexpr double kTarget = 6000;

  struct Trainer {
    std::unique_ptr<ProgressTracker> tracker;
    std::uint64_t step = 0, samples = 0;
    double sps = 0;
    Seconds batch_started = 0;
    bool fetching = false;
  };
  struct Eta {
    std::uint64_t step;
    Seconds at, eta;
  };

  explicit Collaboration(std::vector<double> speeds) : swarm(speeds) {
    for (PeerId p = 0; p < swarm.size(); ++p) {
      trainers.emplace_back();
      trainers.back().tracker =
          std::make_unique<ProgressTracker>(swarm.env(p), *swarm.nodes[p], ProgressConfig{"albert", StepTarget{static_cast<double>(kTarget)}, 30, 10});
    }
    step_times.push_back(swarm.now());
    for (PeerId p = 0; p < swarm.size(); ++p) next_batch(p);
  }

  void next_batch(PeerId p) {
    Trainer& t = trainers[p];
    t.batch_started = swarm.now();
    swarm.env(p).compute(kBatch, [this, p] { batch_done(p); });
  }

  // Training never waits for the DHT: the next batch starts at once, the fetch runs alongside.
  void batch_done(PeerId p) {
    Trainer& t = trainers[p];
    t.sps = static_cast<double>(kBatch) / (swarm.now() - t.batch_started);
    t.samples += kBatch;
    if (t.step == oracle_step) oracle_samples += kBatch;
    t.tracker->report({t.step, t.samples, t.sps});
    next_batch(p);
    if (t.fetching) return;
    t.fetching = true;
    t.tracker->fetch([this, p](const GlobalProgress& g) {
      Trainer& t = trainers[p];
      t.fetching = false;
      if (p == 0 && g.global_step == oracle_step) etas.push_back({g.global_step, swarm.now(), g.eta_s});
      if (g.global_step > t.step) {
        t.step = g.global_step;
        t.samples = 0;
        t.tracker->report({t.step, t.samples, t.sps});
      } else if (g.estimated_samples >= kTarget) {
        if (t.step == oracle_step) {  // the first peer to step: the collaboration's step
          samples_at_step.push_back(oracle_samples);
          step_times.push_back(swarm.now());
          ++oracle_step;
          oracle_samples = 0;
        }
        ++t.step;
        t.samples = 0;
        t.tracker->report({t.step, t.samples, t.sps});
      }
    });
  }

  testing::DhtSwarm swarm;
  std::vector<Trainer> trainers;
  std::uint64_t oracle_step = 0;      // the collaboration's step, as taken by its first peer
  double oracle_samples = 0;          // real samples computed towards the next step
  std::vector<double> samples_at_step;
  std::vector<Seconds> step_times;
  std::vector<Eta> etas;
};

TEST(ProgressTracker, GlobalStepAdvancesAtTheTargetBatchAndEtaIsAccurate) {
  const std::vector<double> speeds = {40, 60, 80, 100, 120, 160, 200, 240};  // Σ = 1000 samples/s
  Collaboration c(speeds);
  c.swarm.run_for(40);

  // About 6 s per step; a few steps in 40 s, every peer following.
  ASSERT_GE(c.samples_at_step.size(), 5u);
  for (std::size_t s = 0; s < c.samples_at_step.size(); ++s) {
    // Estimates count partial batches and a peer learns of a step one fetch late, so the real
    // count is within about one batch per peer of the target.
    EXPECT_NEAR(c.samples_at_step[s], Collaboration::kTarget, speeds.size() * Collaboration::kBatch) << "step " << s;
  }
  for (const auto& t : c.trainers) EXPECT_GE(t.step + 1, c.oracle_step);

  // Once speeds are known (after the first step), the ETA seen 20–80% into a step predicts the
  // real time to the step within 10%.
  std::size_t checked = 0;
  for (const auto& e : c.etas) {
    if (e.step < 1 || e.step + 1 >= c.step_times.size()) continue;
    const Seconds begin = c.step_times[e.step], end = c.step_times[e.step + 1];
    const double into = (e.at - begin) / (end - begin);
    if (into < 0.2 || into > 0.8) continue;
    const Seconds real = end - e.at;
    EXPECT_NEAR(e.eta, real, 0.1 * real) << "step " << e.step << " at " << e.at;
    ++checked;
  }
  EXPECT_GE(checked, 20u);

  // should_start_matchmaking: true once the ETA drops below the matchmaking time.
  const ProgressTracker& tracker = *c.trainers[0].tracker;
  const GlobalProgress now = tracker.estimate(c.swarm.now());
  EXPECT_TRUE(tracker.should_start_matchmaking(c.swarm.now(), now.eta_s + 0.01));
  if (now.eta_s > 0.1) EXPECT_FALSE(tracker.should_start_matchmaking(c.swarm.now(), now.eta_s - 0.1));
}

}  // namespace
}  // namespace swarmlab::core::progress
