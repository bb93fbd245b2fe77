// One DMoE layer's calls to its chosen experts (core/dmoe/mixture.h) in the memory world: three
// runtimes (peers 0, 1, 2) each host one linear expert (dmoe/linear_expert_backend.h); peer 3 is
// the trainer.
#include "core/dmoe/mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/dmoe/expert_runtime.h"
#include "dmoe/linear_expert_backend.h"
#include "support/memory_world.h"

namespace swarmlab::core::dmoe {
namespace {

using core::testing::LinearExpertBackend;
using core::testing::MemoryWorld;
using core::testing::PeerSpec;

constexpr std::uint32_t kIn = 4, kOut = 3;
constexpr PeerId kTrainer = 3;

Tensor values(std::uint32_t rows, std::uint32_t cols, float seed) {
  Tensor t = Tensor::zeros(rows, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = seed + 0.3f * static_cast<float>(i % 5) - 0.2f * static_cast<float>(i % 3);
  return t;
}

// x·W_j in double.
std::vector<double> expert_output(const Tensor& x, const std::vector<float>& w) {
  std::vector<double> y(std::size_t{x.rows} * kOut, 0.0);
  for (std::uint32_t r = 0; r < x.rows; ++r)
    for (std::uint32_t o = 0; o < kOut; ++o)
      for (std::uint32_t i = 0; i < kIn; ++i) y[r * kOut + o] += double{x.values[r * kIn + i]} * w[i * kOut + o];
  return y;
}

double dot(const std::vector<double>& a, const Tensor& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b.values[i];
  return s;
}

struct Layer {
  Layer()
      : world(std::vector<PeerSpec>{{0.01, 0, 1000}, {0.01, 0, 1000}, {0.01, 0, 1000}, {0.01, 0, 0}}),
        client(world.env(kTrainer), ClientConfig{2.0, 4.0}) {
    for (PeerId p = 0; p < 3; ++p) {
      backends.push_back(std::make_unique<LinearExpertBackend>(world.env(p), kIn, kOut));
      runtimes.push_back(std::make_unique<ExpertRuntime>(world.env(p), ExpertGrid{"ffn", 2, 4}, *backends.back()));
      runtimes.back()->host(uids[p]);
      world.env(p).set_sink(runtimes.back().get());
      chosen.push_back({uids[p], p, scores[p]});
    }
    world.env(kTrainer).set_sink(&client);
  }
  ~Layer() {
    for (PeerId p = 0; p < world.size(); ++p) world.env(p).set_sink(nullptr);
  }
  const std::vector<float>& w(std::size_t j) const { return backends[j]->weights(uids[j]); }

  MixtureOutput forward(const Tensor& x) {
    std::optional<MixtureOutput> out;
    mixture_forward(client, chosen, x, kOut, [&](MixtureOutput o) { out = std::move(o); });
    world.run();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : MixtureOutput{};
  }

  const std::vector<ExpertUid> uids{{0, 1}, {1, 3}, {2, 2}};
  const std::vector<double> scores{0.5, -1.25, 1.5};
  MemoryWorld world;
  ExpertClient client;
  std::vector<std::unique_ptr<LinearExpertBackend>> backends;
  std::vector<std::unique_ptr<ExpertRuntime>> runtimes;
  std::vector<ChosenExpert> chosen;
};

TEST(DmoeMixture, SoftmaxIsStableForLargeScores) {
  const std::vector<double> w = softmax({1000, 1001});
  ASSERT_EQ(w.size(), 2u);
  const double e = std::exp(1.0);
  EXPECT_NEAR(w[0], 1 / (1 + e), 1e-15);
  EXPECT_NEAR(w[1], e / (1 + e), 1e-15);
  const std::vector<double> low = softmax({-1000, -1001, -1002});
  EXPECT_TRUE(std::isfinite(low[0]) && std::isfinite(low[2]));
  EXPECT_NEAR(low[0] + low[1] + low[2], 1.0, 1e-15);
  EXPECT_NEAR(low[1] / low[0], 1 / e, 1e-12);
  EXPECT_EQ(softmax({7}), std::vector<double>{1.0});
  EXPECT_TRUE(softmax({}).empty());
  const std::vector<double> even = softmax({0.5, 0.5, 0.5, 0.5});
  for (double v : even) EXPECT_DOUBLE_EQ(v, 0.25);
}

TEST(DmoeMixture, ForwardWeightsTheExpertsBySoftmaxOfTheirScores) {
  Layer l;
  const Tensor x = values(2, kIn, 0.4f);
  const MixtureOutput out = l.forward(x);
  ASSERT_FALSE(out.dropped);
  EXPECT_EQ(out.responded, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(out.failures, std::vector<CallFailure>(3, CallFailure::None));
  const std::vector<double> w = softmax(l.scores);
  ASSERT_EQ(out.weights.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(out.weights[j], w[j]);
  ASSERT_EQ(out.output.rows, 2u);
  ASSERT_EQ(out.output.cols, kOut);
  ASSERT_EQ(out.expert_outputs.size(), 3u);
  std::vector<double> expected(2 * kOut, 0.0);
  for (std::size_t j = 0; j < 3; ++j) {
    const std::vector<double> e = expert_output(x, l.w(j));
    for (std::size_t i = 0; i < e.size(); ++i) {
      expected[i] += w[j] * e[i];
      EXPECT_NEAR(out.expert_outputs[j].values[i], e[i], 1e-6);
    }
  }
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(out.output.values[i], expected[i], 1e-5) << i;
  // Each expert computed the batch once.
  for (const auto& r : l.runtimes) EXPECT_EQ(r->stats().batches, 1u);
}

TEST(DmoeMixture, RenormalisesOverTheExpertsThatAnswered) {
  Layer l;
  l.world.set_down(1);  // crashed: its call fails when refused
  const Tensor x = values(3, kIn, -0.1f);
  const MixtureOutput out = l.forward(x);
  ASSERT_FALSE(out.dropped);
  EXPECT_EQ(out.responded, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(out.failures, (std::vector<CallFailure>{CallFailure::None, CallFailure::LinkFailed, CallFailure::None}));
  const double w0 = 1 / (1 + std::exp(l.scores[2] - l.scores[0]));
  const double w2 = 1 - w0;
  ASSERT_EQ(out.weights.size(), 2u);
  EXPECT_NEAR(out.weights[0], w0, 1e-15);
  EXPECT_NEAR(out.weights[1], w2, 1e-15);
  const std::vector<double> e0 = expert_output(x, l.w(0)), e2 = expert_output(x, l.w(2));
  for (std::size_t i = 0; i < e0.size(); ++i) EXPECT_NEAR(out.output.values[i], w0 * e0[i] + w2 * e2[i], 1e-5);

  // One that vanishes silently is waited for until the forward timeout, then left out the same way.
  Layer s;
  s.world.set_down(0, MemoryWorld::Departure::Silent);
  const MixtureOutput late = s.forward(x);
  EXPECT_NEAR(s.world.now(), 2.0, 1e-9);
  EXPECT_EQ(late.responded, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(late.failures[0], CallFailure::TimedOut);
  EXPECT_EQ(late.weights, softmax({s.scores[1], s.scores[2]}));
}

TEST(DmoeMixture, DroppedWhenNoExpertAnswers) {
  Layer l;
  for (PeerId p = 0; p < 3; ++p) l.world.set_down(p);
  const MixtureOutput out = l.forward(values(1, kIn, 0));
  EXPECT_TRUE(out.dropped);
  EXPECT_TRUE(out.responded.empty());
  EXPECT_TRUE(out.weights.empty());
  EXPECT_EQ(out.failures, std::vector<CallFailure>(3, CallFailure::LinkFailed));
  EXPECT_THROW(mixture_backward(l.client, l.chosen, out, values(1, kIn, 0), values(1, kOut, 0), [](MixtureGradient) {}),
               std::logic_error);
  // No experts chosen at all: dropped at once.
  std::optional<MixtureOutput> none;
  mixture_forward(l.client, {}, values(1, kIn, 0), kOut, [&](MixtureOutput o) { none = std::move(o); });
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->dropped);
}

TEST(DmoeMixture, BackwardGivesTheInputAndGateGradients) {
  Layer l;
  const Tensor x = values(2, kIn, 0.2f);
  const Tensor g = values(2, kOut, -0.3f);
  const MixtureOutput out = l.forward(x);
  ASSERT_FALSE(out.dropped);
  std::vector<std::vector<float>> before;
  for (std::size_t j = 0; j < 3; ++j) before.push_back(l.w(j));
  std::optional<MixtureGradient> grad;
  mixture_backward(l.client, l.chosen, out, x, g, [&](MixtureGradient m) { grad = std::move(m); });
  l.world.run();
  ASSERT_TRUE(grad.has_value());
  EXPECT_FALSE(grad->dropped);
  EXPECT_EQ(grad->answered, 3u);
  const std::vector<double> w = softmax(l.scores);

  // dL/dx = Σ_j w_j g·W_jᵀ, with the weights of before the update.
  ASSERT_EQ(grad->grad_input.rows, 2u);
  ASSERT_EQ(grad->grad_input.cols, kIn);
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::uint32_t i = 0; i < kIn; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < 3; ++j)
        for (std::uint32_t o = 0; o < kOut; ++o) s += w[j] * g.values[r * kOut + o] * before[j][i * kOut + o];
      EXPECT_NEAR(grad->grad_input.values[r * kIn + i], s, 1e-5);
    }

  // dL/ds_j for L = <g, y>: the closed form w_j (<g, E_j> - <g, y>) ...
  std::vector<std::vector<double>> e;
  for (std::size_t j = 0; j < 3; ++j) e.push_back(expert_output(x, before[j]));
  std::vector<double> y(e[0].size(), 0.0);
  for (std::size_t j = 0; j < 3; ++j)
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += w[j] * e[j][i];
  ASSERT_EQ(grad->grad_scores.size(), 3u);
  double sum = 0;
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(grad->grad_scores[j], w[j] * (dot(e[j], g) - dot(y, g)), 1e-5);
    sum += grad->grad_scores[j];
  }
  EXPECT_NEAR(sum, 0.0, 1e-5);  // the softmax's gradients sum to zero
  // ... and a central finite difference of L in each score.
  const auto loss = [&](std::vector<double> s) {
    const std::vector<double> ws = softmax(s);
    double value = 0;
    for (std::size_t j = 0; j < 3; ++j) value += ws[j] * dot(e[j], g);
    return value;
  };
  for (std::size_t j = 0; j < 3; ++j) {
    std::vector<double> up = l.scores, down = l.scores;
    up[j] += 1e-5;
    down[j] -= 1e-5;
    EXPECT_NEAR(grad->grad_scores[j], (loss(up) - loss(down)) / 2e-5, 1e-5) << j;
  }

  // Each expert learnt from its weighted share of the gradient.
  for (std::size_t j = 0; j < 3; ++j) {
    Tensor scaled = g;
    for (float& v : scaled.values) v = static_cast<float>(v * w[j]);
    EXPECT_EQ(l.w(j), LinearExpertBackend::sgd_step(before[j], x, scaled, l.backends[j]->lr())) << j;
  }
}

TEST(DmoeMixture, BackwardSumsTheExpertsThatStillAnswer) {
  Layer l;
  const Tensor x = values(1, kIn, 0.6f);
  const Tensor g = values(1, kOut, 0.1f);
  const MixtureOutput out = l.forward(x);
  std::vector<std::vector<float>> before;
  for (std::size_t j = 0; j < 3; ++j) before.push_back(l.w(j));
  l.world.set_down(2);  // between the forward and the backward pass
  std::optional<MixtureGradient> grad;
  mixture_backward(l.client, l.chosen, out, x, g, [&](MixtureGradient m) { grad = std::move(m); });
  l.world.run();
  ASSERT_TRUE(grad.has_value());
  EXPECT_FALSE(grad->dropped);
  EXPECT_EQ(grad->answered, 2u);
  const std::vector<double> w = softmax(l.scores);
  for (std::uint32_t i = 0; i < kIn; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < 2; ++j)
      for (std::uint32_t o = 0; o < kOut; ++o) s += w[j] * g.values[o] * before[j][i * kOut + o];
    EXPECT_NEAR(grad->grad_input.values[i], s, 1e-5);
  }
  // The gate's gradient comes from the forward pass's outputs: every responder has one.
  for (double v : grad->grad_scores) EXPECT_NE(v, 0.0);

  for (PeerId p = 0; p < 2; ++p) l.world.set_down(p);
  std::optional<MixtureGradient> none;
  mixture_backward(l.client, l.chosen, out, x, g, [&](MixtureGradient m) { none = std::move(m); });
  l.world.run();
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->dropped);
  EXPECT_EQ(none->answered, 0u);
}

// Additive gating: an expert's score is the sum of its coordinates' entries, so each entry's
// gradient collects the chosen experts that share that coordinate.
TEST(DmoeMixture, TheScoreVectorsGradientCollectsTheExpertsOfEachCoordinate) {
  const ExpertGrid grid{"ffn", 2, 3};
  const std::vector<ChosenExpert> chosen = {{{0, 2}, 0, 0}, {{1, 2}, 1, 0}, {{0, 1}, 2, 0}};
  const auto g = score_vector_gradient(grid, chosen, {0.5, -1.0, 0.25});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], (std::vector<double>{0.75, -1.0, 0.0}));
  EXPECT_EQ(g[1], (std::vector<double>{0.0, 0.25, -0.5}));
  EXPECT_THROW(score_vector_gradient(grid, chosen, {1.0}), std::invalid_argument);
  EXPECT_THROW(score_vector_gradient(grid, {{{0, 3}, 0, 0}}, {1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
