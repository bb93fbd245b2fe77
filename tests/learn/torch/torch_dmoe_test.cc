#include "learn/torch/torch_dmoe.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "learn_fixture.h"

namespace swarmlab::learn {
namespace {

using core::dmoe::CheckpointError;
using core::dmoe::ExpertUid;
using core::dmoe::Tensor;
using testing::fashion_train;
using testing::PostQueue;

TorchExpertConfig expert_config(std::uint32_t width = 4, std::uint32_t hidden = 6) {
  TorchExpertConfig c;
  c.width = width;
  c.hidden = hidden;
  c.lr = 0.01;
  c.device = Device::Cpu;
  return c;
}

Tensor rows(std::uint32_t n, std::uint32_t cols, float scale = 1.0f) {
  Tensor t = Tensor::zeros(n, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.3f);
  return t;
}

Tensor call(PostQueue& q, const std::function<void(std::function<void(Tensor)>)>& start) {
  std::optional<Tensor> out;
  start([&out](Tensor t) { out = std::move(t); });
  EXPECT_FALSE(out.has_value()) << "the backend must answer later, not inside the call";
  EXPECT_TRUE(q.run_until([&] { return out.has_value(); }, 10));
  return *out;
}

Tensor forward(PostQueue& q, TorchExpertBackend& b, const ExpertUid& uid, const Tensor& x) {
  return call(q, [&](auto done) { b.forward(uid, x, std::move(done)); });
}

TEST(TorchExpertBackend, AFreshExpertIsTheSameOnEveryRuntimeAndExpertsDiffer) {
  PostQueue q;
  TorchExpertBackend a(expert_config(), q.poster()), b(expert_config(), q.poster());
  a.create({1, 2});
  b.create({1, 2});
  b.create({2, 1});
  const Tensor x = rows(3, 4);
  const Tensor ya = forward(q, a, {1, 2}, x);
  EXPECT_EQ(ya.rows, 3u);
  EXPECT_EQ(ya.cols, 4u);
  EXPECT_EQ(ya.values, forward(q, b, {1, 2}, x).values);
  EXPECT_NE(ya.values, forward(q, b, {2, 1}, x).values);
  EXPECT_EQ(expert_parameter_count(expert_config()), 2u * 4 * 6 + 6 + 4);
}

// The input gradient against central differences of <g, E(x)>, taken before the update lands.
TEST(TorchExpertBackend, BackwardReturnsTheInputGradientAndUpdatesTheExpert) {
  PostQueue q;
  TorchExpertBackend probe(expert_config(), q.poster()), b(expert_config(), q.poster());
  probe.create({0});
  b.create({0});
  const Tensor x = rows(2, 4), g = rows(2, 4, 0.5f);
  auto objective = [&](const Tensor& in) {
    const Tensor y = forward(q, probe, {0}, in);
    return std::inner_product(y.values.begin(), y.values.end(), g.values.begin(), 0.0);
  };
  const Tensor grad = call(q, [&](auto done) { b.backward({0}, x, g, std::move(done)); });
  ASSERT_EQ(grad.values.size(), x.values.size());
  for (std::size_t i = 0; i < x.values.size(); ++i) {
    Tensor up = x, down = x;
    up.values[i] += 1e-2f;
    down.values[i] -= 1e-2f;
    EXPECT_NEAR(grad.values[i], (objective(up) - objective(down)) / 2e-2, 2e-3) << "element " << i;
  }
  EXPECT_EQ(b.updates({0}), 1u);
  EXPECT_NE(forward(q, b, {0}, x).values, forward(q, probe, {0}, x).values) << "the expert took its own step";
}

TEST(TorchExpertBackend, ACheckpointRestoresTheExpertWithItsOptimizerAndFitsADhtValue) {
  PostQueue q;
  TorchExpertBackend a(expert_config(32, 64), q.poster()), b(expert_config(32, 64), q.poster());
  a.create({3, 1});
  const Tensor x = rows(5, 32), g = rows(5, 32, 0.1f);
  for (int i = 0; i < 3; ++i) call(q, [&](auto done) { a.backward({3, 1}, x, g, std::move(done)); });
  const auto bytes = a.checkpoint({3, 1});
  EXPECT_LT(bytes.size(), 64u * 1024) << "the shipped experts' checkpoints fit a DHT value (docs/learning-at-home.md §10)";
  b.load({3, 1}, bytes);
  EXPECT_EQ(b.updates({3, 1}), 3u);
  EXPECT_EQ(forward(q, a, {3, 1}, x).values, forward(q, b, {3, 1}, x).values);
  // The same next step on both: the Adam moments came along.
  call(q, [&](auto done) { a.backward({3, 1}, x, g, std::move(done)); });
  call(q, [&](auto done) { b.backward({3, 1}, x, g, std::move(done)); });
  EXPECT_EQ(a.checkpoint({3, 1}), b.checkpoint({3, 1}));
}

TEST(TorchExpertBackend, ACheckpointThatDoesNotFitIsRefusedAndHostsNothing) {
  PostQueue q;
  TorchExpertBackend a(expert_config(4, 6), q.poster()), other(expert_config(4, 8), q.poster());
  a.create({0});
  other.create({0});
  auto bytes = a.checkpoint({0});
  TorchExpertBackend b(expert_config(4, 6), q.poster());
  EXPECT_THROW(b.load({1}, other.checkpoint({0})), CheckpointError);  // another shape
  EXPECT_THROW(b.load({1}, std::vector<std::uint8_t>(bytes.begin(), bytes.end() - 1)), CheckpointError);  // truncated
  EXPECT_THROW(b.load({1}, std::vector<std::uint8_t>(100, 0x41)), CheckpointError);  // garbage
  auto nan = bytes;
  const float bad = std::nanf("");
  std::memcpy(nan.data() + 24, &bad, 4);
  EXPECT_THROW(b.load({1}, nan), CheckpointError);
  EXPECT_EQ(b.updates({1}), 0u);
  EXPECT_THROW(forward(q, b, {1}, rows(1, 4)), std::out_of_range);
}

TorchDmoeTrainerConfig trainer_config() {
  TorchDmoeTrainerConfig c;
  c.width = 8;
  c.layers = 2;
  c.dims = 2;
  c.side = 3;
  c.lr = 0.01;
  c.device = Device::Cpu;
  return c;
}

// dL/dh through a gate: scores = mean over rows of W h + b, so row r gets Wᵀg / rows.
TEST(TorchDmoeTrainerModel, TheGateGradientIsTheMeanScoresTranspose) {
  TorchDmoeTrainerModel m(trainer_config());
  const std::vector<std::uint32_t> idx = {0, 1, 2, 3};
  const Tensor h = m.begin(1, *fashion_train(), idx, true);
  ASSERT_EQ(h.rows, 4u);
  ASSERT_EQ(h.cols, 8u);
  const auto scores = m.gate(1, 0, h);
  ASSERT_EQ(scores.size(), 2u);
  ASSERT_EQ(scores[0].size(), 3u);
  // Finite differences of <G, scores(h)> in one element of h, against gate_backward.
  const std::vector<std::vector<double>> G = {{0.3, -0.2, 0.5}, {1.0, 0.1, -0.4}};
  TorchDmoeTrainerModel probe(trainer_config());
  probe.begin(9, *fashion_train(), idx, false);
  auto objective = [&](const Tensor& in) {
    const auto s = probe.gate(9, 0, in);
    double v = 0;
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 3; ++j) v += G[i][j] * s[i][j];
    return v;
  };
  const Tensor grad = m.gate_backward(1, 0, G);
  ASSERT_EQ(grad.values.size(), h.values.size());
  for (std::size_t e : {0u, 5u, 17u, 31u}) {
    Tensor up = h, down = h;
    up.values[e] += 1e-2f;
    down.values[e] -= 1e-2f;
    EXPECT_NEAR(grad.values[e], (objective(up) - objective(down)) / 2e-2, 1e-4) << "element " << e;
  }
  EXPECT_THROW(m.gate_backward(1, 0, G), std::logic_error) << "each gate pass is gone back through once";
}

// With no experts (every mixture output zero) the model is stem + head: training one batch over
// and over must drive its loss down, through the head's and the stem's gradients.
TEST(TorchDmoeTrainerModel, TrainingWithoutExpertsLowersTheLoss) {
  TorchDmoeTrainerModel m(trainer_config());
  std::vector<std::uint32_t> idx(32);
  std::iota(idx.begin(), idx.end(), 0u);
  double first = 0, last = 0;
  for (std::uint64_t step = 1; step <= 60; ++step) {
    Tensor h = m.begin(step, *fashion_train(), idx, true);
    for (std::uint32_t l = 0; l < 2; ++l) m.gate(step, l, h);
    const HeadResult r = m.head(step, h);
    if (step == 1) first = r.loss;
    last = r.loss;
    Tensor g = r.grad;
    for (std::uint32_t l = 2; l-- > 0;) {
      const Tensor through = m.gate_backward(step, l, {{0, 0, 0}, {0, 0, 0}});
      for (std::size_t i = 0; i < g.values.size(); ++i) g.values[i] += through.values[i];
    }
    m.finish(step, g);
  }
  EXPECT_EQ(m.steps(), 60u);
  EXPECT_EQ(m.batches_kept(), 0u);
  EXPECT_LT(last, 0.5 * first);
}

TEST(TorchDmoeTrainerModel, BadBatchesAreRefused) {
  TorchDmoeTrainerModel m(trainer_config());
  EXPECT_THROW(m.begin(1, *fashion_train(), {}, true), std::invalid_argument);
  const std::vector<std::uint32_t> outside = {fashion_train()->count};
  EXPECT_THROW(m.begin(1, *fashion_train(), outside, true), std::out_of_range);
  const std::vector<std::uint32_t> one = {0};
  m.begin(1, *fashion_train(), one, true);
  EXPECT_THROW(m.begin(1, *fashion_train(), one, true), std::invalid_argument);
  EXPECT_THROW(m.gate(2, 0, Tensor::zeros(1, 8)), std::out_of_range);
  m.release(1);
  EXPECT_EQ(m.batches_kept(), 0u);
  TorchDmoeTrainerConfig zero = trainer_config();
  zero.layers = 0;
  EXPECT_THROW(TorchDmoeTrainerModel{zero}, std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::learn
