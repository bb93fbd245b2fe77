// A trainer's stack of DMoE layers (core/dmoe/dmoe_stack.h): a batch's walk forward through every
// layer and back, what the trainer computes between them, and what is released when a batch is
// dropped or only evaluated.
#include "core/dmoe/dmoe_stack.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dmoe/expert_announcer.h"
#include "core/dmoe/expert_runtime.h"
#include "dmoe/linear_expert_backend.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::dmoe {
namespace {

using core::testing::LinearExpertBackend;

constexpr std::uint32_t kWidth = 3;
constexpr PeerId kTrainer = 6;

// A residual trunk that records what it was asked, in order.
class RecordingTrunk final : public TrunkModel {
 public:
  std::vector<std::vector<double>> gate(std::uint64_t batch, std::uint32_t layer, const Tensor&) override {
    log.push_back("gate " + std::to_string(batch) + "/" + std::to_string(layer));
    std::vector<std::vector<double>> s(2, std::vector<double>(4, 0.0));
    s[0] = {0, 0.5, 1.0, 0.2};
    return s;
  }
  Tensor output(std::uint64_t batch, std::uint32_t layer, Tensor h, const Tensor& mixture) override {
    log.push_back("output " + std::to_string(batch) + "/" + std::to_string(layer));
    for (std::size_t i = 0; i < h.values.size(); ++i) h.values[i] += mixture.values[i];
    return h;
  }
  Tensor input_gradient(std::uint64_t batch, std::uint32_t layer, Tensor grad, const MixtureGradient& m) override {
    log.push_back("input_gradient " + std::to_string(batch) + "/" + std::to_string(layer));
    gate_gradients.push_back(m.grad_gate);
    for (std::size_t i = 0; i < grad.values.size(); ++i) grad.values[i] += m.grad_input.values[i];
    return grad;
  }
  std::vector<std::string> log;
  std::vector<std::vector<std::vector<double>>> gate_gradients;
};

// Runtimes 1..3 host one expert each, announced for both layers; peer 6 trains through both.
struct Stack {
  explicit Stack(Seconds pause_s = 0)
      : swarm(std::vector<double>(8, 100.0)), client(swarm.env(kTrainer), ClientConfig{2.0, 4.0}) {
    swarm.muxes[kTrainer]->add(ServiceId::Experts, client);
    for (PeerId p = 1; p <= 3; ++p) {
      backends.push_back(std::make_unique<LinearExpertBackend>(swarm.env(p), kWidth, kWidth));
      runtimes.push_back(std::make_unique<ExpertRuntime>(swarm.env(p), grids[0], *backends.back()));
      runtimes.back()->host(ExpertUid{p, p});
      swarm.muxes[p]->add(ServiceId::Experts, *runtimes.back());
      // Requests name an expert by its coordinates only, so the one runtime answers both layers'
      // calls; it is announced under both grids.
      for (const ExpertGrid& grid : grids) {
        announcers.push_back(std::make_unique<ExpertAnnouncer>(swarm.env(p), *swarm.nodes[p], grid, AnnounceConfig{20, 5}));
        announcers.back()->start([p] { return std::vector<ExpertUid>{{p, p}}; });
      }
    }
    for (const ExpertGrid& grid : grids)
      layers.push_back(std::make_unique<DmoeLayer>(swarm.env(kTrainer), *swarm.nodes[kTrainer], client, grid, 4, kWidth, kWidth));
    stack = std::make_unique<DmoeStack>(swarm.env(kTrainer), std::vector<DmoeLayer*>{layers[0].get(), layers[1].get()},
                                        trunk, pause_s);
    swarm.run_for(3);
  }
  StackForward forward(std::uint64_t batch, bool train) {
    std::optional<StackForward> out;
    stack->forward(batch, input(), train, [&](StackForward f) { out = std::move(f); });
    EXPECT_FALSE(out.has_value());  // never inside the call
    swarm.run_for(60);
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : StackForward{};
  }
  StackBackward backward(std::uint64_t batch) {
    std::optional<StackBackward> out;
    stack->backward(batch, Tensor::zeros(2, kWidth), [&](StackBackward b) { out = std::move(b); });
    swarm.run_for(60);
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : StackBackward{};
  }
  static Tensor input() {
    Tensor t = Tensor::zeros(2, kWidth);
    for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = 0.5f + 0.25f * static_cast<float>(i);
    return t;
  }
  std::size_t kept() const { return layers[0]->kept() + layers[1]->kept(); }

  std::vector<ExpertGrid> grids{{"ffn0", 2, 4}, {"ffn1", 2, 4}};
  testing::DhtSwarm swarm;
  ExpertClient client;
  std::vector<std::unique_ptr<LinearExpertBackend>> backends;
  std::vector<std::unique_ptr<ExpertRuntime>> runtimes;
  std::vector<std::unique_ptr<ExpertAnnouncer>> announcers;
  std::vector<std::unique_ptr<DmoeLayer>> layers;
  RecordingTrunk trunk;
  std::unique_ptr<DmoeStack> stack;
};

TEST(DmoeStack, GoesUpThroughEveryLayerAndBackDownInReverse) {
  Stack s;
  const StackForward up = s.forward(7, true);
  ASSERT_EQ(up.dropped, BatchDrop::None);
  EXPECT_EQ(up.experts_answered, 6u);  // three experts in each of two layers
  EXPECT_EQ(up.output.rows, 2u);
  EXPECT_NE(up.output, Stack::input());  // h + two mixtures
  EXPECT_EQ(s.kept(), 2u);                // one call per layer, until the backward pass
  EXPECT_EQ(s.stack->in_flight(), 1u);
  const StackBackward down = s.backward(7);
  ASSERT_EQ(down.dropped, BatchDrop::None);
  EXPECT_EQ(down.grad_input.cols, kWidth);
  EXPECT_EQ(s.kept(), 0u);
  EXPECT_EQ(s.stack->in_flight(), 0u);
  const std::vector<std::string> want{"gate 7/0",           "output 7/0", "gate 7/1", "output 7/1",
                                      "input_gradient 7/1", "input_gradient 7/0"};
  EXPECT_EQ(s.trunk.log, want);
  ASSERT_EQ(s.trunk.gate_gradients.size(), 2u);
  EXPECT_EQ(s.trunk.gate_gradients[0].size(), 2u);  // the gate's dims score vectors
  EXPECT_THROW(s.backward(7), std::out_of_range);
}

TEST(DmoeStack, AnEvaluationBatchKeepsNothingAndCannotGoBackward) {
  Stack s;
  const StackForward up = s.forward(1, false);
  ASSERT_EQ(up.dropped, BatchDrop::None);
  EXPECT_EQ(s.kept(), 0u);
  EXPECT_EQ(s.stack->in_flight(), 0u);
  EXPECT_THROW(s.stack->backward(1, Tensor::zeros(2, kWidth), [](StackBackward) {}), std::out_of_range);
}

TEST(DmoeStack, ABatchDroppedOnTheWayDownReleasesTheCallsOfTheLayersBelow) {
  Stack s;
  ASSERT_EQ(s.forward(3, true).dropped, BatchDrop::None);
  EXPECT_EQ(s.kept(), 2u);
  for (PeerId p = 1; p <= 3; ++p) s.swarm.world->set_down(p, testing::MemoryWorld::Departure::Silent);
  const StackBackward down = s.backward(3);
  EXPECT_EQ(down.dropped, BatchDrop::Backward);
  EXPECT_EQ(s.kept(), 0u);  // layer 0's call too, whose backward will never come
  EXPECT_EQ(s.stack->in_flight(), 0u);
  // A minute later their announcements have lapsed: the next batch finds no expert.
  EXPECT_EQ(s.forward(4, true).dropped, BatchDrop::NoExperts);
  EXPECT_EQ(s.stack->in_flight(), 0u);
}

TEST(DmoeStack, PausesAfterEveryExpertCallOfATrainingBatchOnly) {
  Stack paused(5.0);
  const Seconds t0 = paused.swarm.env(kTrainer).now();
  std::optional<Seconds> eval_done, train_done;
  paused.stack->forward(1, Stack::input(), false, [&](StackForward) { eval_done = paused.swarm.env(kTrainer).now(); });
  paused.stack->forward(2, Stack::input(), true, [&](StackForward) { train_done = paused.swarm.env(kTrainer).now(); });
  paused.swarm.run_for(200);
  ASSERT_TRUE(eval_done && train_done);
  EXPECT_GT(*train_done - t0, *eval_done - t0);
  EXPECT_THROW(paused.stack->forward(2, Stack::input(), true, [](StackForward) {}), std::invalid_argument);  // in flight
}

TEST(DmoeStack, RefusesNoLayersAndANegativePause) {
  Stack s;
  EXPECT_THROW(DmoeStack(s.swarm.env(kTrainer), {}, s.trunk), std::invalid_argument);
  EXPECT_THROW(DmoeStack(s.swarm.env(kTrainer), {s.layers[0].get()}, s.trunk, -1), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
