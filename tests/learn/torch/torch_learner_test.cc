#include "learn/torch/torch_learner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "learn_fixture.h"

namespace swarmlab::learn {
namespace {

using core::training::Mode;
using core::training::StateError;
using ::testing::HasSubstr;
using testing::compute_now;
using testing::fashion_test;
using testing::fashion_train;
using testing::PostQueue;

TorchLearnerConfig config(Model model, Mode mode, std::uint64_t seed = 1) {
  TorchLearnerConfig c;
  c.model = model;
  c.mode = mode;
  c.model_seed = seed;
  c.device = Device::Cpu;
  c.threads = 1;  // ctest runs two test processes at once on CI's two cores
  return c;
}

std::unique_ptr<TorchLearner> make(PostQueue& q, const TorchLearnerConfig& c, std::unique_ptr<SampleStream> stream) {
  return std::make_unique<TorchLearner>(c, fashion_train(), std::move(stream), q.poster());
}

std::unique_ptr<TorchLearner> make_fixed(PostQueue& q, const TorchLearnerConfig& c, std::uint64_t peer, std::uint64_t start = 0) {
  return make(q, c, std::make_unique<FixedOrderStream>(77, fashion_train()->count, peer, start));
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
  return m;
}

// max |a - b| / max |b|
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d / max_abs(b);
}

std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

TEST(TorchLearner, ModelsHaveTheirAdvertisedSizes) {
  PostQueue q;
  EXPECT_EQ(model_parameter_count(Model::Linear), 7850u);
  EXPECT_EQ(model_parameter_count(Model::Cnn), 103018u);
  EXPECT_EQ(model_parameter_count(Model::Mlp), 3716106u);
  auto mlp = make_fixed(q, config(Model::Mlp, Mode::Dedloc), 0);
  EXPECT_EQ(mlp->parameter_count(), 3716106u);
  EXPECT_FALSE(mlp->on_cuda());
  compute_now(q, *mlp, 4);
  EXPECT_EQ(mlp->begin_averaging(4).size(), 3716106u);
  EXPECT_GT(mlp->compute_seconds(), 0.0);
  // Every peer starts from the same parameters: they come from the model seed alone.
  auto a = make_fixed(q, config(Model::Cnn, Mode::Dedloc, 5), 0), b = make_fixed(q, config(Model::Cnn, Mode::Dedloc, 5), 3);
  EXPECT_EQ(a->parameters(), b->parameters());
  EXPECT_NE(a->parameters(), make_fixed(q, config(Model::Cnn, Mode::Dedloc, 6), 0)->parameters());
}

TEST(TorchLearner, GradientsAccumulateLinearly) {
  PostQueue q;
  const auto c = config(Model::Cnn, Mode::Dedloc);
  // 2 x 16 samples accumulated, handed over once.
  auto both = make_fixed(q, c, 0);
  compute_now(q, *both, 16);
  compute_now(q, *both, 16);
  const std::vector<float> mean32 = copy(both->begin_averaging(32));
  ASSERT_EQ(both->handover().size(), 2u);
  // The same 32 samples in one micro-batch.
  auto one = make_fixed(q, c, 0);
  compute_now(q, *one, 32);
  EXPECT_LT(relative_difference(copy(one->begin_averaging(32)), mean32), 1e-5);
  // Two hand-overs of 16 each: their average is the mean over 32.
  auto halves = make_fixed(q, c, 0);
  compute_now(q, *halves, 16);
  const std::vector<float> first = copy(halves->begin_averaging(16));
  halves->discard();
  compute_now(q, *halves, 16);
  const std::vector<float> second = copy(halves->begin_averaging(16));
  std::vector<float> average(first.size());
  for (std::size_t i = 0; i < first.size(); ++i) average[i] = (first[i] + second[i]) / 2;
  EXPECT_LT(relative_difference(average, mean32), 1e-5);
  EXPECT_GT(max_abs(mean32), 1e-3);  // a real gradient, not zeros
  // The loss of what was computed, then nothing until more is.
  const auto loss = both->take_loss();
  ASSERT_TRUE(loss.has_value());
  EXPECT_NEAR(*loss, std::log(10.0), 0.3);  // an untrained classifier over 10 classes
  EXPECT_FALSE(both->take_loss().has_value());
}

TEST(TorchLearner, ExportImportRoundTripIsBitIdentical) {
  PostQueue q;
  const auto c = config(Model::Cnn, Mode::Dedloc, 1);
  auto a = make_fixed(q, c, 0);
  for (int step = 0; step < 2; ++step) {
    compute_now(q, *a, 24);
    a->begin_averaging(24);
    a->apply_averaged();
  }
  const std::vector<std::uint8_t> state = a->export_state();
  EXPECT_EQ(state.size(), a->state_bytes());
  auto b = make_fixed(q, config(Model::Cnn, Mode::Dedloc, 2), 0, 48);  // other initial parameters
  EXPECT_NE(b->parameters(), a->parameters());
  b->import_state(state);
  EXPECT_EQ(b->export_state(), state);
  EXPECT_EQ(b->parameters(), a->parameters());
  EXPECT_EQ(b->optimizer_steps(), 2u);
  // Both take the next step on the same samples: still identical (momentum travelled too).
  for (auto* l : {a.get(), b.get()}) {
    compute_now(q, *l, 24);
    l->begin_averaging(24);
    l->apply_averaged();
  }
  EXPECT_EQ(b->parameters(), a->parameters());
  EXPECT_EQ(b->export_state(), a->export_state());
}

// A peer that loaded an older state replays the steps it missed (core/training/state_service.h):
// the averaged vector into an empty hand-over, then the step. It must end where the peer that
// averaged it ended: the whole state for DeDLOC; the shared (outer) parameters for DiLoCo, whose
// inner optimizer state is each worker's own.
TEST(TorchLearner, AReplayedStepEndsWhereTheAveragingPeerEnded) {
  for (const Mode mode : {Mode::Dedloc, Mode::Diloco}) {
    PostQueue q;
    const auto c = config(Model::Cnn, mode, 1);
    auto a = make_fixed(q, c, 0);
    compute_now(q, *a, 24);
    a->begin_averaging(24);
    a->apply_averaged();
    auto b = make_fixed(q, config(Model::Cnn, mode, 2), 0);
    b->import_state(a->export_state());
    compute_now(q, *a, 24);
    const std::vector<float> averaged = copy(a->begin_averaging(24));  // as if the round left it
    a->apply_averaged();
    const std::span<float> replay = b->begin_averaging(0);
    ASSERT_EQ(replay.size(), averaged.size());
    std::copy(averaged.begin(), averaged.end(), replay.begin());
    b->apply_averaged();
    EXPECT_EQ(b->parameters(), a->parameters()) << name(mode);
    EXPECT_EQ(b->optimizer_steps(), a->optimizer_steps()) << name(mode);
    if (mode == Mode::Dedloc) EXPECT_EQ(b->export_state(), a->export_state());
  }
}

TEST(TorchLearner, ForeignOrDamagedStatesAreRejectedAndChangeNothing) {
  PostQueue q;
  auto cnn = make_fixed(q, config(Model::Cnn, Mode::Dedloc), 0);
  const std::vector<std::uint8_t> state = cnn->export_state();
  auto linear = make_fixed(q, config(Model::Linear, Mode::Dedloc), 0);
  auto diloco = make_fixed(q, config(Model::Cnn, Mode::Diloco), 0);
  EXPECT_NE(cnn->model_identity(), diloco->model_identity());
  const std::vector<std::uint8_t> linear_before = linear->export_state(), diloco_before = diloco->export_state();
  auto error = [](TorchLearner& l, std::span<const std::uint8_t> bytes) -> std::string {
    try {
      l.import_state(bytes);
    } catch (const StateError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(error(*linear, state), HasSubstr("another model"));
  EXPECT_THAT(error(*diloco, state), HasSubstr("another model"));
  auto receiver = make_fixed(q, config(Model::Cnn, Mode::Dedloc, 9), 0);
  const std::vector<std::uint8_t> receiver_before = receiver->export_state();
  EXPECT_THAT(error(*receiver, std::span(state).first(state.size() - 100)), HasSubstr("truncated"));
  EXPECT_THAT(error(*receiver, std::span(state).first(10)), HasSubstr("shorter than"));
  std::vector<std::uint8_t> corrupt = state;
  corrupt[corrupt.size() / 2] ^= 0x40;
  EXPECT_THAT(error(*receiver, corrupt), HasSubstr("checksum"));
  std::vector<std::uint8_t> garbage(state.size(), 0xAB);
  EXPECT_THAT(error(*receiver, garbage), HasSubstr("not a swarmlab learner state"));
  EXPECT_EQ(linear->export_state(), linear_before);
  EXPECT_EQ(diloco->export_state(), diloco_before);
  EXPECT_EQ(receiver->export_state(), receiver_before);
}

// DiLoCo on softmax regression, every number recomputed here: one inner AdamW step, the
// pseudo-gradient, and two outer Nesterov steps.
TEST(TorchLearner, DilocoInnerAndOuterStepsMatchAHandComputation) {
  PostQueue q;
  TorchLearnerConfig c = config(Model::Linear, Mode::Diloco, 3);
  c.inner_lr = 1e-3;
  c.inner_weight_decay = 0.1;
  c.inner_eps = 1e-4;  // keeps g / (|g| + eps) well conditioned for a float-versus-double check
  const std::vector<std::uint32_t> batch = {0, 1, 2, 3, 4, 5, 6, 7};
  auto stream = std::make_unique<ListStream>(batch);
  stream->append({8, 9, 10, 11});
  auto l = make(q, c, std::move(stream));
  const LabelledImages& data = *fashion_train();

  const std::vector<float> theta0 = l->parameters();
  ASSERT_EQ(theta0.size(), 7850u);
  // The mean cross-entropy gradient over the batch, in double.
  std::vector<double> g(7850, 0.0);
  for (std::uint32_t s : batch) {
    std::vector<double> x(784), logits(10);
    for (int j = 0; j < 784; ++j) x[j] = normalised_pixel(data.pixels[std::size_t{s} * 784 + j]);
    for (int k = 0; k < 10; ++k) {
      logits[k] = theta0[7840 + k];
      for (int j = 0; j < 784; ++j) logits[k] += theta0[k * 784 + j] * x[j];
    }
    const double top = *std::max_element(logits.begin(), logits.end());
    double z = 0;
    for (double v : logits) z += std::exp(v - top);
    for (int k = 0; k < 10; ++k) {
      const double delta = std::exp(logits[k] - top) / z - (data.labels[s] == k ? 1.0 : 0.0);
      for (int j = 0; j < 784; ++j) g[k * 784 + j] += delta * x[j] / batch.size();
      g[7840 + k] += delta / batch.size();
    }
  }
  compute_now(q, *l, 8);
  const std::vector<float> theta1 = l->parameters();
  // AdamW, first step: m^ = g, v^ = g^2, so theta <- theta (1 - lr wd) - lr g / (|g| + eps).
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double expected = theta0[i] * (1 - 1e-3 * 0.1) - 1e-3 * g[i] / (std::fabs(g[i]) + 1e-4);
    worst = std::max(worst, std::fabs(theta1[i] - expected));
  }
  EXPECT_LT(worst, 1e-6);

  // The pseudo-gradient is exactly parameters before minus parameters now.
  std::span<float> pseudo = l->begin_averaging(8);
  for (std::size_t i = 0; i < pseudo.size(); ++i) ASSERT_EQ(pseudo[i], theta0[i] - theta1[i]) << i;
  // The round leaves an average there; the outer step starts from theta0.
  std::vector<float> d1(7850), d2(7850);
  for (std::size_t i = 0; i < d1.size(); ++i) {
    d1[i] = 0.01f * static_cast<float>(static_cast<int>((i * 37) % 101) - 50) / 50.0f;
    d2[i] = 0.02f * std::sin(static_cast<float>(i));
  }
  std::copy(d1.begin(), d1.end(), pseudo.begin());
  l->apply_averaged();
  const std::vector<float> theta2 = l->parameters();
  worst = 0;
  for (std::size_t i = 0; i < d1.size(); ++i) {
    const double buf = d1[i];                    // first step: buf = d
    const double update = d1[i] + 0.9 * buf;     // Nesterov
    worst = std::max(worst, std::fabs(theta2[i] - (theta0[i] - 0.7 * update)));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(l->optimizer_steps(), 1u);

  // Second round: another inner step from theta2, then the outer step with momentum.
  compute_now(q, *l, 4);
  const std::vector<float> theta3 = l->parameters();
  pseudo = l->begin_averaging(4);
  for (std::size_t i = 0; i < pseudo.size(); ++i) ASSERT_EQ(pseudo[i], theta2[i] - theta3[i]) << i;
  std::copy(d2.begin(), d2.end(), pseudo.begin());
  l->apply_averaged();
  const std::vector<float> theta4 = l->parameters();
  worst = 0;
  for (std::size_t i = 0; i < d2.size(); ++i) {
    const double buf = 0.9 * d1[i] + d2[i];
    const double update = d2[i] + 0.9 * buf;
    worst = std::max(worst, std::fabs(theta4[i] - (theta2[i] - 0.7 * update)));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(l->inner_steps(), 2u);
}

TEST(TorchLearner, DilocoDiscardReturnsToTheSharedParameters) {
  PostQueue q;
  auto l = make_fixed(q, config(Model::Linear, Mode::Diloco), 0);
  const std::vector<float> shared = l->parameters();
  compute_now(q, *l, 8);
  compute_now(q, *l, 8);
  EXPECT_NE(l->parameters(), shared);
  l->discard();
  EXPECT_EQ(l->parameters(), shared);
  // Nothing accumulated: the next hand-over is a zero pseudo-gradient.
  for (float v : l->begin_averaging(0)) ASSERT_EQ(v, 0.0f);
}

// Delayed parameter updates: the step is applied between micro-batches, after the one in flight,
// so the outcome depends on the order of calls only.
TEST(TorchLearner, ApplyWhileComputingLandsBetweenMicroBatches) {
  PostQueue q;
  const auto c = config(Model::Cnn, Mode::Dedloc);
  auto run = [&](bool overlapped) {
    auto l = make_fixed(q, c, 0);
    compute_now(q, *l, 16);
    l->begin_averaging(16);
    bool done = false;
    l->compute(16, [&] { done = true; });
    if (!overlapped) EXPECT_TRUE(q.run_until([&] { return done; }));
    l->apply_averaged();  // with `overlapped`, while the micro-batch computes
    EXPECT_TRUE(q.run_until([&] { return done; }));
    compute_now(q, *l, 16);  // after the step
    l->begin_averaging(32);
    // The first micro-batch of this hand-over was computed before the step, the second after.
    EXPECT_EQ(l->handover(), (std::vector<MicroBatchRecord>{{16, 16, 0}, {32, 16, 1}}));
    l->apply_averaged();
    return l->export_state();
  };
  const auto overlapped = run(true);
  EXPECT_EQ(overlapped, run(true));
  EXPECT_EQ(overlapped, run(false));
}

// Issue 12's central claim, in one process: four peers of different speeds, each handing over its
// mean gradient, averaged with weights = sample counts as the butterfly does, end every step with
// the parameters of one learner taking one step on the union of their samples.
TEST(TorchLearner, FourPeersEqualOneLargeBatchStep) {
  PostQueue q;
  const auto c = config(Model::Cnn, Mode::Dedloc, 11);
  constexpr int kPeers = 4;
  constexpr std::uint64_t kTarget = 96;                         // global batch B
  const std::uint64_t micro[kPeers] = {3, 5, 8, 13};           // samples per micro-batch
  const int period[kPeers] = {1, 1, 2, 3};                     // ticks per micro-batch: speeds differ
  const std::uint64_t seed = 77;
  const std::uint32_t size = fashion_train()->count;
  std::vector<std::unique_ptr<TorchLearner>> peers;
  for (int p = 0; p < kPeers; ++p) peers.push_back(make_fixed(q, c, p));
  auto replay = std::make_unique<ListStream>(std::vector<std::uint32_t>{});
  ListStream* replay_list = replay.get();
  auto single = make(q, c, std::move(replay));

  for (int step = 0; step < 5; ++step) {
    // Peers compute concurrently, each at its pace, until the collaboration holds B samples.
    std::uint64_t total = 0;
    std::uint64_t contributed[kPeers] = {};
    for (int tick = 0; total < kTarget; ++tick) {
      int pending = 0;
      for (int p = 0; p < kPeers; ++p) {
        if (tick % period[p] != 0 || total >= kTarget) continue;
        ++pending;
        total += micro[p];
        contributed[p] += micro[p];
        peers[p]->compute(micro[p], [&pending] { --pending; });
      }
      ASSERT_TRUE(q.run_until([&] { return pending == 0; }));
    }
    // The round: weighted average of the mean gradients, written back into every peer's buffer.
    std::vector<std::span<float>> buffers;
    std::vector<double> sum(peers[0]->parameter_count(), 0.0);
    std::vector<std::uint32_t> samples;
    for (int p = 0; p < kPeers; ++p) {
      buffers.push_back(peers[p]->begin_averaging(contributed[p]));
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<double>(contributed[p]) * buffers[p][i];
      // What the step contained, from the hand-over's record alone.
      for (const MicroBatchRecord& r : peers[p]->handover()) {
        EXPECT_EQ(r.version, static_cast<std::uint64_t>(step));  // no stale micro-batch here
        for (std::uint64_t k = r.first; k < r.first + r.count; ++k) samples.push_back(fixed_order_index(seed, size, p, k));
      }
    }
    ASSERT_EQ(samples.size(), total);
    for (int p = 0; p < kPeers; ++p) {
      for (std::size_t i = 0; i < sum.size(); ++i) buffers[p][i] = static_cast<float>(sum[i] / static_cast<double>(total));
      peers[p]->apply_averaged();
    }
    // The single process: one step on the union.
    replay_list->append(samples);
    compute_now(q, *single, samples.size());
    single->begin_averaging(samples.size());
    single->apply_averaged();

    const std::vector<float> reference = single->parameters();
    const std::vector<float> first = peers[0]->parameters();
    for (int p = 1; p < kPeers; ++p) EXPECT_EQ(peers[p]->parameters(), first) << "peer " << p << " step " << step;
    const double diff = relative_difference(first, reference);
    std::printf("step %d: B = %llu, max |collaboration - single| / max |single| = %.3g\n", step,
                static_cast<unsigned long long>(total), diff);
    EXPECT_LT(diff, 1e-5) << "step " << step;
  }
}

// The first 1,000 test images (a quick accuracy check).
std::shared_ptr<const LabelledImages> test_subset(std::uint32_t count) {
  auto subset = std::make_shared<LabelledImages>();
  const LabelledImages& test = *fashion_test();
  subset->count = count;
  subset->rows = test.rows;
  subset->cols = test.cols;
  subset->pixels.assign(test.pixels.begin(), test.pixels.begin() + std::size_t{count} * 784);
  subset->labels.assign(test.labels.begin(), test.labels.begin() + count);
  return subset;
}

std::unique_ptr<TorchLearner> make_shuffled(PostQueue& q, const TorchLearnerConfig& c, std::uint64_t peer) {
  ShardStreamConfig s;
  s.dataset_size = fashion_train()->count;
  s.buffer_size = 2000;
  s.seed = 3;
  s.peer = peer;
  return make(q, c, std::make_unique<ShardStream>(s));
}

// A short CPU run through the DeDLOC path (micro-batches, hand-over, SGD step) learns: the
// training loss falls and test accuracy rises well above chance. The long run to 85% is
// TrainSlow.CnnReaches85PercentOnFashionMnist.
TEST(TorchLearner, ShortDedlocRunLearns) {
  PostQueue q;
  auto l = make_shuffled(q, config(Model::Cnn, Mode::Dedloc, 1), 0);
  const auto test = test_subset(1000);
  const Evaluation before = l->evaluate(*test);
  std::vector<double> losses;
  for (int step = 0; step < 60; ++step) {
    compute_now(q, *l, 32);
    compute_now(q, *l, 32);
    l->begin_averaging(64);
    l->apply_averaged();
    losses.push_back(*l->take_loss());
  }
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  const Evaluation after = l->evaluate(*test);
  std::printf("DeDLOC, 60 steps of 64: train loss %.3f -> %.3f, test accuracy %.3f -> %.3f\n", first, last,
              before.accuracy, after.accuracy);
  EXPECT_LT(last, 0.6 * first);
  EXPECT_GT(after.accuracy, 0.6);
  EXPECT_LT(after.loss, before.loss);
}

// The same for DiLoCo: inner AdamW steps, pseudo-gradients, outer Nesterov steps.
TEST(TorchLearner, ShortDilocoRunLearns) {
  PostQueue q;
  TorchLearnerConfig c = config(Model::Cnn, Mode::Diloco, 1);
  c.inner_weight_decay = 0.0;
  auto l = make_shuffled(q, c, 0);
  const auto test = test_subset(1000);
  const Evaluation before = l->evaluate(*test);
  for (int outer = 0; outer < 12; ++outer) {
    for (int inner = 0; inner < 5; ++inner) compute_now(q, *l, 64);
    l->begin_averaging(320);
    l->apply_averaged();
  }
  const Evaluation after = l->evaluate(*test);
  std::printf("DiLoCo, 12 outer steps of 5 x 64: test loss %.3f -> %.3f, accuracy %.3f -> %.3f\n", before.loss,
              after.loss, before.accuracy, after.accuracy);
  EXPECT_LT(after.loss, 0.6 * before.loss);
  EXPECT_GT(after.accuracy, 0.6);
  EXPECT_EQ(l->inner_steps(), 60u);
  EXPECT_EQ(l->optimizer_steps(), 12u);
}

TEST(TorchLearner, EvaluatesOnTheTestSet) {
  PostQueue q;
  auto l = make_fixed(q, config(Model::Cnn, Mode::Dedloc), 0);
  auto subset = std::make_shared<LabelledImages>();
  const LabelledImages& test = *fashion_test();
  subset->count = 2000;
  subset->rows = test.rows;
  subset->cols = test.cols;
  subset->pixels.assign(test.pixels.begin(), test.pixels.begin() + 2000 * 784);
  subset->labels.assign(test.labels.begin(), test.labels.begin() + 2000);
  const Evaluation e = l->evaluate(*subset);
  EXPECT_EQ(e.samples, 2000u);
  EXPECT_GE(e.accuracy, 0.0);
  EXPECT_LT(e.accuracy, 0.35);  // untrained
  EXPECT_NEAR(e.loss, std::log(10.0), 0.3);
  // Asynchronously: the same answer, delivered on the peer's thread.
  std::optional<Evaluation> later;
  l->evaluate_async(subset, [&](Evaluation x) { later = x; });
  ASSERT_TRUE(q.run_until([&] { return later.has_value(); }));
  EXPECT_EQ(later->accuracy, e.accuracy);
  EXPECT_EQ(later->loss, e.loss);
}

TEST(TorchLearner, MisuseIsReported) {
  PostQueue q;
  auto l = make(q, config(Model::Linear, Mode::Dedloc), std::make_unique<ListStream>(std::vector<std::uint32_t>{1, 60000}));
  EXPECT_THROW(l->apply_averaged(), std::logic_error);
  EXPECT_THROW(l->compute(2, [] {}), std::out_of_range);  // an index outside the training set
  auto m = make_fixed(q, config(Model::Linear, Mode::Dedloc), 0);
  bool done = false;
  m->compute(4, [&] { done = true; });
  EXPECT_THROW(m->compute(4, [] {}), std::logic_error);  // one micro-batch at a time
  EXPECT_TRUE(q.run_until([&] { return done; }));
  m->begin_averaging(4);
  EXPECT_THROW(m->begin_averaging(0), std::logic_error);
}

TEST(TorchLearner, DestroyingAbandonsTheMicroBatchInFlight) {
  PostQueue q;
  bool ran = false;
  {
    auto l = make_fixed(q, config(Model::Cnn, Mode::Dedloc), 0);
    l->compute(64, [&] { ran = true; });
  }
  q.run_until([] { return false; }, 0.5);  // drain whatever was posted
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace swarmlab::learn
