// Live training (issue 12): real `swarmlab peer --train` processes on loopback, started by the
// launcher, checked against a single-process libtorch run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "exec/launcher.h"
#include "exec/parameters_hash.h"
#include "learn_fixture.h"
#include "learn/sample_stream.h"
#include "live_swarm.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::exec {
namespace {

using learn::testing::PostQueue;
using learn::testing::compute_now;
using learn::testing::fashion_train;

const std::string kScenario = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/live/fashion-mnist-4.json";

struct StepLine {
  std::size_t peer = 0;
  std::uint64_t step = 0;
  double loss = 0;
  std::uint64_t contributed = 0;
  std::string hash;
  std::vector<learn::MicroBatchRecord> handover;
};

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<float> out(static_cast<std::size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  return out;
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

// DeDLOC's central claim, live: four peers of different speeds (600/400/300/200 samples/s) with
// the fp32 wire, DPU off and a fixed sample order end every global step with the parameters a
// single process reaches by one SGD step on the same samples, and their loss-per-step curves
// overlay. The single process replays each step from the peers' records alone: the stream
// positions each peer handed over and the parameter version each micro-batch was computed at (a
// micro-batch in flight when a round begins is computed on the parameters before that step and
// lands in the next one; the reference computes it at the same point).
TEST(LiveTraining, FourUnequalPeersStepLikeOneLargeBatchSgd) {
  testing::TempDir dir;
  TrainLaunch t;
  t.model = "linear";
  t.steps = 50;
  t.order = "fixed";
  t.dpu = "off";
  t.evaluate_every = 0;
  t.dump_parameters = true;
  const LaunchResult r = testing::launch_training(kScenario, dir.path, t, 240, core::codec::Codec::Fp32);
  ASSERT_TRUE(r.training.has_value());
  ASSERT_TRUE(r.ok) << "see " << dir.path;
  EXPECT_TRUE(r.training->consistent);

  // Every peer's step lines, by step.
  std::map<std::uint64_t, std::vector<StepLine>> steps;
  for (std::size_t p = 0; p < 4; ++p)
    for (const auto& j : testing::peer_records(dir.path, p)) {
      ASSERT_NE(j.value("event", std::string()), "sync") << "peer " << p << " loaded state: the replay assumes none";
      if (j.contains("event")) continue;
      StepLine s;
      s.peer = p;
      s.step = j["step"];
      s.loss = j["loss"].is_number() ? j["loss"].get<double>() : 0.0;
      s.contributed = j["contributed"];
      s.hash = j["params_hash"];
      for (const auto& r : j["handover"]) s.handover.push_back({r[0], r[1], r[2]});
      steps[s.step].push_back(s);
    }
  ASSERT_GE(steps.size(), 50u);
  // No honest peer comes near its share of another's DHT store (docs/trust.md §2).
  for (std::size_t p = 0; p < 4; ++p) {
    const nlohmann::json exit = testing::exit_record(dir.path, p);
    ASSERT_TRUE(exit.is_object()) << "peer " << p;
    EXPECT_EQ(exit.value("refused_stores", std::uint64_t{1}), 0u) << "peer " << p;
  }

  const scenarios::Scenario sc = scenarios::load_scenario(kScenario);
  PostQueue q;
  learn::TorchLearnerConfig c;
  c.model = learn::Model::Linear;
  c.model_seed = sc.seed;
  c.lr = 0.05;
  c.momentum = 0.9;
  c.threads = 1;
  c.device = learn::Device::Cpu;
  auto list = std::make_unique<learn::ListStream>(std::vector<std::uint32_t>{});
  learn::ListStream* replay = list.get();
  learn::TorchLearner reference(c, fashion_train(), std::move(list), q.poster());
  std::vector<std::vector<std::uint8_t>> states{reference.export_state()};  // states[v]: after v steps
  const std::uint32_t size = fashion_train()->count;
  std::size_t stale = 0;
  double worst = 0, worst_loss = 0;

  for (std::uint64_t k = 1; k <= 50; ++k) {
    const auto& lines = steps[k];
    ASSERT_EQ(lines.size(), 4u) << "step " << k << ": every peer averages every step here";
    std::set<std::string> hashes;
    std::vector<double> sum(reference.parameter_count(), 0.0);
    std::uint64_t total = 0;
    double loss_sum = 0, reference_loss_sum = 0;
    for (const StepLine& s : lines) {
      hashes.insert(s.hash);
      std::uint64_t from_records = 0;
      for (const learn::MicroBatchRecord& m : s.handover) {
        ASSERT_LT(m.version, k) << "step " << k;
        stale += m.version + 1 < k;
        std::vector<std::uint32_t> indices;
        for (std::uint64_t i = m.first; i < m.first + m.count; ++i)
          indices.push_back(learn::fixed_order_index(sc.seed, size, s.peer, i));
        replay->append(indices);
        reference.import_state(states[m.version]);  // the parameters it was computed at
        compute_now(q, reference, m.count);
        reference_loss_sum += *reference.take_loss() * static_cast<double>(m.count);
        const std::span<float> g = reference.begin_averaging(m.count);
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<double>(m.count) * g[i];
        reference.discard();
        from_records += m.count;
      }
      ASSERT_EQ(from_records, s.contributed) << "peer " << s.peer << " step " << k;
      total += s.contributed;
      loss_sum += s.loss * static_cast<double>(s.contributed);
    }
    EXPECT_EQ(hashes.size(), 1u) << "step " << k << ": the peers' parameters differ";
    // One SGD step on the union, from the parameters after step k - 1.
    reference.import_state(states[k - 1]);
    const std::span<float> step = reference.begin_averaging(0);
    for (std::size_t i = 0; i < sum.size(); ++i) step[i] = static_cast<float>(sum[i] / static_cast<double>(total));
    reference.apply_averaged();
    states.push_back(reference.export_state());
    const std::vector<float> single = reference.parameters();
    const std::vector<float> live = read_floats(dir.path + "/parameters/peer-0-step-" + std::to_string(k) + ".f32");
    ASSERT_EQ(live.size(), single.size());
    EXPECT_EQ(parameters_hash(live), *hashes.begin()) << "step " << k;
    const double diff = relative_l2(live, single);
    worst = std::max(worst, diff);
    EXPECT_LT(diff, 1e-5) << "step " << k << " (B = " << total << ")";
    // The loss curves: the collaboration's (members' losses weighted by their samples) and the
    // single process's on the same samples.
    const double live_loss = loss_sum / static_cast<double>(total), single_loss = reference_loss_sum / static_cast<double>(total);
    worst_loss = std::max(worst_loss, std::abs(live_loss - single_loss) / single_loss);
    EXPECT_NEAR(live_loss, single_loss, 1e-4 * single_loss) << "step " << k;
  }
  std::printf("50 live steps: max relative L2 difference %.3g, max relative loss difference %.3g, %zu stale micro-batches\n",
              worst, worst_loss, stale);
}

// Consistency with the fp16 wire and delayed parameter updates: after every step every peer at
// that step holds bit-identical parameters (equal hashes), and each peer's sample ledger balances.
TEST(LiveTraining, PeersHoldIdenticalParametersWithFp16AndDpu) {
  testing::TempDir dir;
  TrainLaunch t;
  t.model = "cnn";
  t.steps = 15;
  t.dpu = "on";
  t.evaluate_every = 5;
  t.eval_samples = 500;
  const LaunchResult r = testing::launch_training(kScenario, dir.path, t, 180, core::codec::Codec::Fp16);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent);
  EXPECT_GE(s.last_step, 15u);
  std::size_t evaluated = 0;
  for (const auto& x : s.steps) {
    EXPECT_TRUE(x.consistent) << "step " << x.step;
    evaluated += x.test_accuracy.has_value();
  }
  EXPECT_GE(evaluated, 3u);
  for (const auto& p : s.peers) {
    EXPECT_TRUE(p.samples.balanced) << "peer " << p.peer;
    EXPECT_EQ(p.incarnations, 1u);
    EXPECT_GT(p.samples.contributed, 0u);
  }
  ASSERT_TRUE(s.final_test_accuracy.has_value());
  EXPECT_GT(*s.final_test_accuracy, 0.3);  // 15 steps of 256+ samples: well above chance (0.1)
}

// CenteredClip live (docs/trust.md §3): the scenario's averaging.centered_clip reaches every peer
// process through the core's CollaborativePeer, reducers clip real libtorch gradients, and every
// peer still ends each step with the same parameters, and learns.
TEST(LiveTraining, CenteredClipRunsLiveAndPeersStayIdentical) {
  testing::TempDir dir;
  nlohmann::json sc = nlohmann::json::parse(std::ifstream(kScenario));
  // A radius well inside the honest gradients' spread, so that reducers do clip.
  sc["averaging"]["centered_clip"] = {{"tau", 0.05}, {"iterations", 10}};
  const std::string path = dir.write("clipped.json", sc.dump(2));
  TrainLaunch t;
  t.model = "linear";
  t.steps = 15;
  t.evaluate_every = 5;
  t.eval_samples = 500;
  const LaunchResult r = testing::launch_training(path, dir.path, t, 180);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent);
  EXPECT_GE(s.last_step, 15u);
  for (const auto& x : s.steps) EXPECT_TRUE(x.consistent) << "step " << x.step;
  ASSERT_TRUE(s.final_test_accuracy.has_value());
  EXPECT_GT(*s.final_test_accuracy, 0.3);
  std::uint64_t clipped = 0;
  for (std::size_t p = 0; p < 4; ++p)
    for (const auto& j : testing::peer_records(dir.path, p))
      if (j.contains("clipped")) clipped += j["clipped"].get<std::uint64_t>();
  EXPECT_GT(clipped, 0u);
}

// Peer 3 joins 15 s into a 30-step run, well after the first steps (which come some 5-10 s in),
// given only the backbone's address.
LaunchResult launch_with_late_peer(const std::string& dir, std::int64_t kept_updates) {
  LaunchOptions o = testing::test_launch(kScenario, dir);
  o.deadline_s = 180;
  TrainLaunch t;
  t.model = "linear";
  t.steps = 30;
  t.evaluate_every = 0;
  t.kept_updates = kept_updates;
  o.train = t;
  o.joins.push_back({3, 15.0});
  o.bootstrap_peers = 1;
  return launch(o);
}

// A new peer joins a running collaboration: given only the backbone's address, it learns the others'
// and finds them through the DHT, downloads the state from an up-to-date peer (a "sync" line), then
// trains and averages with them; from then on its parameters are bit-identical to everyone else's.
TEST(LiveTraining, ALatePeerDownloadsTheStateAndTrains) {
  testing::TempDir dir;
  const LaunchResult r = launch_with_late_peer(dir.path, -1);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent);
  const TrainingPeerSummary& late = s.peers[3];
  EXPECT_GE(late.syncs, 1u) << "the late peer did not download the state";
  EXPECT_GT(late.samples.contributed, 0u) << "the late peer never contributed to a step";
  EXPECT_TRUE(late.samples.balanced);
  // Its first line is the download of a step the others had reached; it averages from the next one.
  // A download that fails first (a connection that breaks on a loaded machine) is tried again.
  auto lines = testing::peer_records(dir.path, 3);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].value("event", std::string()), "start");
  std::erase_if(lines, [](const nlohmann::json& j) {
    const std::string event = j.value("event", std::string());
    return event == "start" || event == "books";
  });
  while (!lines.empty() && lines[0].value("event", std::string()) == "sync" && !lines[0].value("ok", false))
    lines.erase(lines.begin());
  ASSERT_FALSE(lines.empty());
  ASSERT_EQ(lines[0].value("event", std::string()), "sync");
  EXPECT_TRUE(lines[0].value("ok", false));
  const std::uint64_t synced = lines[0]["step"];
  EXPECT_GE(synced, 1u);
  ASSERT_GT(lines.size(), 1u);
  EXPECT_GT(lines[1]["step"].get<std::uint64_t>(), synced);
  std::size_t with_late = 0;
  for (const auto& x : s.steps) with_late += x.members == 4;
  EXPECT_GT(with_late, 5u);
}

// The same late peer, with every peer keeping the averaged vector of every step: it loads no state
// at all but replays each step from its initial parameters (everyone's, from the same seed), and
// then holds exactly the parameters of the peers that averaged them (docs/interpretations.md §26).
TEST(LiveTraining, ALatePeerReplaysTheStepsItMissedFromItsInitialParameters) {
  testing::TempDir dir;
  const LaunchResult r = launch_with_late_peer(dir.path, 1000);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent) << "a replayed state differs from the averaging peers' (see " << dir.path << ")";
  EXPECT_TRUE(s.survivors_identical);
  const TrainingPeerSummary& late = s.peers[3];
  EXPECT_GE(late.update_syncs, 1u);
  // A download that failed (a connection that broke on a loaded machine) is tried again, from
  // another provider; what must never arrive is a whole state.
  for (const auto& j : testing::peer_records(dir.path, 3))
    if (j.value("event", std::string()) == "sync" && j.value("ok", false))
      EXPECT_TRUE(j.value("updates", false)) << "it loaded a whole state: " << j.dump();
  EXPECT_GT(late.samples.contributed, 0u);
  EXPECT_TRUE(late.samples.balanced);
}

// DiLoCo live (docs/opendiloco.md §1): four workers of 400/400/200/200 samples/s each take H = 20
// inner AdamW steps of 32 samples, then average their pseudo-gradients in fp16 and take the same
// outer Nesterov step: every outer step holds exactly 4 x 640 samples, every worker ends it with
// bit-identical parameters, and the model learns.
TEST(LiveTraining, DilocoWorkersTakeIdenticalOuterSteps) {
  testing::TempDir dir;
  TrainLaunch t;
  t.model = "cnn";
  t.steps = 6;
  t.evaluate_every = 3;
  t.eval_samples = 1000;
  const LaunchResult r =
      testing::launch_training(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/live/fashion-mnist-diloco.json", dir.path, t, 180);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent);
  ASSERT_GE(s.last_step, 6u);
  for (const auto& x : s.steps) {
    if (x.step > 6) continue;
    EXPECT_EQ(x.members, 4u) << "step " << x.step;
    EXPECT_EQ(x.samples, 4u * 20u * 32u) << "step " << x.step;
    EXPECT_TRUE(x.consistent) << "step " << x.step;
  }
  for (const auto& p : s.peers) EXPECT_TRUE(p.samples.balanced) << "peer " << p.peer;
  ASSERT_TRUE(s.final_test_accuracy.has_value());
  EXPECT_GT(*s.final_test_accuracy, 0.6);  // 6 outer steps of 2,560 samples (measured 0.78)
}

}  // namespace
}  // namespace swarmlab::exec
