#include "scenarios/dmoe_live.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/input_error.h"

namespace swarmlab::scenarios {
namespace {

using ::testing::HasSubstr;

const std::string kShipped = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/dmoe/fashion-mnist.json";

TEST(DmoeLiveScenario, TheShippedRunLoadsAndRoundTripsThroughItsJson) {
  const DmoeLiveScenario s = load_dmoe_live_file(kShipped);
  EXPECT_EQ(s.name, "fashion-mnist-dmoe");
  EXPECT_EQ(s.runtimes, 8u);
  EXPECT_EQ(s.trainers, 4u);
  EXPECT_EQ(s.layers, 4u);
  EXPECT_EQ(s.k, 4u);
  const DmoeLiveScenario back = load_dmoe_live(dmoe_live_json(s), "round trip");
  EXPECT_EQ(dmoe_live_json(back), dmoe_live_json(s));
  EXPECT_EQ(back.delay_s, s.delay_s);
  EXPECT_TRUE(is_dmoe_live(dmoe_live_json(s)));
  EXPECT_FALSE(is_dmoe_live("{\"name\": \"x\", \"peers\": []}"));
  EXPECT_FALSE(is_dmoe_live("not json"));
}

// Every expert of a layer is hosted by exactly one of the layer's runtimes, and each runtime
// watches the next one of its layer, round the layer.
TEST(DmoeLiveScenario, TheLayersRuntimesShareItsExpertsAndWatchEachOther) {
  DmoeLiveScenario s;
  s.runtimes = 7;  // layers 0-2 get 2 runtimes, layer 3 one
  s.layers = 4;
  for (std::uint32_t layer = 0; layer < s.layers; ++layer) {
    std::set<core::dmoe::ExpertUid> seen;
    std::size_t hosted = 0;
    for (std::uint32_t r = 0; r < s.runtimes; ++r) {
      if (s.layer_of(r) != layer) continue;
      for (const auto& uid : s.hosted_by(r)) seen.insert(uid), ++hosted;
      EXPECT_EQ(s.layer_of(s.watched_by(r)), layer);
    }
    EXPECT_EQ(hosted, s.grid(layer).capacity()) << "layer " << layer;
    EXPECT_EQ(seen.size(), s.grid(layer).capacity());
  }
  EXPECT_EQ(s.watched_by(0), 4u);
  EXPECT_EQ(s.watched_by(4), 0u);
  EXPECT_EQ(s.watched_by(3), 3u) << "the layer's only runtime watches nobody else";
  s.dense = true;
  EXPECT_EQ(s.grid(1).capacity(), 1u);
  EXPECT_EQ(s.expert_hidden(), s.k * s.hidden);
  EXPECT_EQ(s.experts_per_call(), 1u);
}

struct Bad {
  const char* json;
  const char* location;
  const char* expectation;
};

class BadDmoeLiveScenario : public ::testing::TestWithParam<Bad> {};

TEST_P(BadDmoeLiveScenario, NamesTheFieldAndWhatWasExpected) {
  const Bad& c = GetParam();
  try {
    load_dmoe_live(c.json, "bad.json");
    FAIL() << c.json << ": expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), "bad.json");
    EXPECT_EQ(e.location(), c.location) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(c.expectation));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, BadDmoeLiveScenario,
    ::testing::Values(
        Bad{R"({"dmoe": {"seed": 1}})", "dmoe.name", "missing required field"},
        Bad{R"({"dmoe": {"name": "a/b"}})", "dmoe.name", "letters, digits"},
        Bad{R"({"dmoe": {"name": "x", "modle": {}}})", "dmoe.modle", "model"},
        Bad{R"({"dmoe": {"name": "x", "model": {"grid": [2, 2], "k": 5}}})", "dmoe.model.k", "at most the grid's 4 experts"},
        Bad{R"({"dmoe": {"name": "x", "model": {"grid": [2]}}})", "dmoe.model.grid", "[dims, side]"},
        Bad{R"({"dmoe": {"name": "x", "runtimes": 3}})", "dmoe.runtimes", "at least one runtime per layer"},
        Bad{R"({"dmoe": {"name": "x", "training": {"delay_ms": -1}}})", "dmoe.training.delay_ms", "non-negative"},
        Bad{R"({"dmoe": {"name": "x", "training": {"lr": 0}}})", "dmoe.training.lr", "learning rate in (0, 10]"},
        Bad{R"({"dmoe": {"name": "x", "training": {"batch": 0}}})", "dmoe.training.batch", "images per batch"},
        Bad{R"({"dmoe": {"name": "x", "experts": {"alive_for_s": 2, "announce_period_s": 2}}})", "dmoe.experts.announce_period_s",
            "less than alive_for_s"},
        Bad{R"({"dmoe": {"name": "x", "trainers": 1000}})", "dmoe.trainers", "trainer processes"},
        Bad{R"({"dmoe": [1]})", "dmoe", "the live DMoE run (an object)"},
        Bad{R"({"dmoe": {"name": "x"}, "peers": []})", "peers", "dmoe"}));

}  // namespace
}  // namespace swarmlab::scenarios
