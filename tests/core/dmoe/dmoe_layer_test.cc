// One DMoE layer on a trainer (core/dmoe/dmoe_layer.h): beam search, then the mixture, then the
// backward pass through the experts that answered, with what it keeps in between.
#include "core/dmoe/dmoe_layer.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/dmoe/expert_announcer.h"
#include "core/dmoe/expert_runtime.h"
#include "dmoe/linear_expert_backend.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::dmoe {
namespace {

using core::testing::LinearExpertBackend;

constexpr std::uint32_t kIn = 3, kOut = 2;
constexpr PeerId kTrainer = 6;
const ExpertGrid kGrid{"ffn", 2, 4};

// Runtimes 1..3 host one expert each; peer 6 trains.
struct Layer {
  Layer() : swarm(std::vector<double>(8, 100.0)), client(swarm.env(kTrainer), ClientConfig{2.0, 4.0}) {
    swarm.muxes[kTrainer]->add(ServiceId::Experts, client);
    for (PeerId p = 1; p <= 3; ++p) {
      backends.push_back(std::make_unique<LinearExpertBackend>(swarm.env(p), kIn, kOut));
      runtimes.push_back(std::make_unique<ExpertRuntime>(swarm.env(p), kGrid, *backends.back()));
      swarm.muxes[p]->add(ServiceId::Experts, *runtimes.back());
      runtimes.back()->host(uid(p));
      announcers.push_back(std::make_unique<ExpertAnnouncer>(swarm.env(p), *swarm.nodes[p], kGrid, AnnounceConfig{20, 5}));
      announcers.back()->start([u = uid(p)] { return std::vector<ExpertUid>{u}; });
    }
    layer = std::make_unique<DmoeLayer>(swarm.env(kTrainer), *swarm.nodes[kTrainer], client, kGrid, 4, kIn, kOut);
    swarm.run_for(3);
  }
  static ExpertUid uid(PeerId p) { return {p, p}; }
  LayerForward forward(std::vector<std::vector<double>> scores, Tensor x) {
    std::optional<LayerForward> out;
    layer->forward(std::move(scores), std::move(x), [&](LayerForward f) { out = std::move(f); });
    EXPECT_FALSE(out.has_value());  // never inside the call
    swarm.run_for(10);
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : LayerForward{};
  }

  testing::DhtSwarm swarm;
  ExpertClient client;
  std::vector<std::unique_ptr<LinearExpertBackend>> backends;
  std::vector<std::unique_ptr<ExpertRuntime>> runtimes;
  std::vector<std::unique_ptr<ExpertAnnouncer>> announcers;
  std::unique_ptr<DmoeLayer> layer;
};

Tensor rows(std::uint32_t n, std::uint32_t cols, float seed) {
  Tensor t = Tensor::zeros(n, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = seed + 0.25f * static_cast<float>(i);
  return t;
}

std::vector<std::vector<double>> scores() {
  std::vector<std::vector<double>> s(2, std::vector<double>(4, 0.0));
  s[0] = {0, 0.5, 1.0, 0.2};
  return s;
}

TEST(DmoeLayer, ChoosesTheLiveExpertsCombinesThemAndGoesBackThroughThem) {
  Layer l;
  const Tensor x = rows(2, kIn, 0.5f);
  const LayerForward f = l.forward(scores(), x);
  ASSERT_EQ(f.outcome, LayerForward::Outcome::Done);
  ASSERT_EQ(f.search.experts.size(), 3u);
  EXPECT_EQ(f.search.experts[0].uid, Layer::uid(2));  // the best first score
  EXPECT_EQ(l.layer->kept(), 1u);
  // y = Σ softmax(s)_j x W_j, scores 1.0, 0.5 and 0.2 for experts 2, 1 and 3.
  const std::vector<double> w = softmax({1.0, 0.5, 0.2});
  std::vector<double> want(f.output.values.size(), 0.0);
  const PeerId order[] = {2, 1, 3};
  for (int j = 0; j < 3; ++j) {
    const Tensor y = LinearExpertBackend::matmul(x, LinearExpertBackend::initial_weights(Layer::uid(order[j]), kIn, kOut), kOut);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += w[j] * y.values[i];
  }
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(f.output.values[i], want[i], 1e-5) << i;

  std::optional<MixtureGradient> g;
  l.layer->backward(f.call, rows(2, kOut, 1.0f), [&](MixtureGradient r) { g = std::move(r); });
  l.swarm.run_for(10);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->dropped);
  EXPECT_EQ(g->answered, 3u);
  EXPECT_EQ(g->grad_input.cols, kIn);
  // The gate's gradient, per score vector, is the chosen experts' score gradients by coordinate.
  EXPECT_EQ(g->grad_gate, score_vector_gradient(l.layer->grid(), f.search.experts, g->grad_scores));
  EXPECT_EQ(g->grad_gate.size(), l.layer->grid().dims);
  EXPECT_EQ(l.layer->kept(), 0u);
  EXPECT_THROW(l.layer->backward(f.call, rows(2, kOut, 1.0f), [](MixtureGradient) {}), std::out_of_range);
}

TEST(DmoeLayer, ReportsWhyABatchIsDroppedAndKeepsNothingForIt) {
  Layer l;
  for (PeerId p = 1; p <= 3; ++p) l.swarm.world->set_down(p, testing::MemoryWorld::Departure::Silent);
  // Still announced: the experts are chosen, none answers.
  const LayerForward silent = l.forward(scores(), rows(1, kIn, 0));
  EXPECT_EQ(silent.outcome, LayerForward::Outcome::NoAnswer);
  EXPECT_EQ(silent.failures.size(), 3u);
  EXPECT_EQ(l.layer->kept(), 0u);
  // Once the announcements have lapsed, nothing is chosen.
  l.swarm.run_for(25);
  const LayerForward gone = l.forward(scores(), rows(1, kIn, 0));
  EXPECT_EQ(gone.outcome, LayerForward::Outcome::NoExperts);
  EXPECT_TRUE(gone.search.experts.empty());
  EXPECT_EQ(l.layer->kept(), 0u);
}

TEST(DmoeLayer, ReleasesAForwardCallWhoseBackwardWillNotCome) {
  Layer l;
  const LayerForward f = l.forward(scores(), rows(1, kIn, 0));
  ASSERT_EQ(f.outcome, LayerForward::Outcome::Done);
  EXPECT_EQ(l.layer->kept(), 1u);
  l.layer->release(f.call);
  EXPECT_EQ(l.layer->kept(), 0u);
  EXPECT_THROW(l.layer->forward(scores(), rows(1, kIn + 1, 0), [](LayerForward) {}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
