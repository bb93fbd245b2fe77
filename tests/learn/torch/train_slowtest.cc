// Single-process training on Fashion-MNIST with the real learner: the CNN must reach 85% test
// accuracy. Prints the steps and the wall time it took (issue 12 asks for both, to set against a
// collaboration at the same batch).
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "learn_fixture.h"

namespace swarmlab::learn {
namespace {

using testing::compute_now;
using testing::fashion_test;
using testing::fashion_train;
using testing::PostQueue;

// Trains the CNN with batches of `batch` samples until 85% test accuracy (evaluated every
// `eval_every` steps); returns the accuracy reached.
double train_to_85_percent(std::uint64_t batch, std::uint64_t eval_every) {
  const std::uint64_t kBatch = batch, kMicro = 32, kMaxSteps = 3000, kEvalEvery = eval_every;
  PostQueue q;
  TorchLearnerConfig c;
  c.model = Model::Cnn;
  c.model_seed = 1;
  c.lr = 0.05;
  c.momentum = 0.9;
  ShardStreamConfig s;
  s.dataset_size = fashion_train()->count;
  s.seed = 1;
  TorchLearner l(c, fashion_train(), std::make_unique<ShardStream>(s), q.poster());
  const auto start = std::chrono::steady_clock::now();
  Evaluation e;
  std::uint64_t step = 0;
  while (step < kMaxSteps) {
    for (std::uint64_t done = 0; done < kBatch; done += kMicro) compute_now(q, l, kMicro);
    l.begin_averaging(kBatch);
    l.apply_averaged();
    ++step;
    if (step % kEvalEvery == 0) {
      e = l.evaluate(*fashion_test());
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("step %llu (%llu samples): test accuracy %.4f, loss %.4f, train loss %.4f, %.1f s (compute %.1f s)\n",
                  static_cast<unsigned long long>(step), static_cast<unsigned long long>(step * kBatch), e.accuracy,
                  e.loss, l.take_loss().value_or(0), wall, l.compute_seconds());
      std::fflush(stdout);
      if (e.accuracy >= 0.85) break;
    }
  }
  return e.accuracy;
}

TEST(TrainSlow, CnnReaches85PercentOnFashionMnist) { EXPECT_GE(train_to_85_percent(128, 100), 0.85); }

// The batch the live 6-peer collaboration steps with on loopback (scenarios/live/fashion-mnist-6.json:
// target 256, about 1,000 samples a step once coordination is counted): the single-process figure
// to set against it (exec/README.md).
TEST(TrainSlow, CnnAtTheLiveCollaborationsBatch) { EXPECT_GE(train_to_85_percent(1024, 25), 0.85); }

}  // namespace
}  // namespace swarmlab::learn
