#include "learn/learner_state.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/training/learner.h"

namespace swarmlab::learn {
namespace {

using ::testing::HasSubstr;

constexpr LearnerStateShape kStateShape{0xfeedULL, 3, 2};

LearnerState sample_state() {
  LearnerState s;
  s.steps = 5;
  s.inner_steps = 40;
  s.vectors = {{1, -2, 0.5f}, {0, 0.25f, 8}};
  return s;
}

std::string state_error(const std::vector<std::uint8_t>& bytes, const LearnerStateShape& shape = kStateShape) {
  try {
    decode_learner_state(bytes, shape, "test model");
  } catch (const core::training::StateError& e) {
    return e.what();
  }
  return "";
}

TEST(LearnerState, RoundTripsAndHasTheAdvertisedSize) {
  const std::vector<std::uint8_t> bytes = encode_learner_state(kStateShape.identity, sample_state());
  EXPECT_EQ(bytes.size(), learner_state_bytes(kStateShape));
  const LearnerState back = decode_learner_state(bytes, kStateShape, "test model");
  EXPECT_EQ(back.steps, 5u);
  EXPECT_EQ(back.inner_steps, 40u);
  EXPECT_EQ(back.vectors, sample_state().vectors);
}

TEST(LearnerState, EveryDefectIsAStateErrorThatSaysWhich) {
  const std::vector<std::uint8_t> good = encode_learner_state(kStateShape.identity, sample_state());
  EXPECT_THAT(state_error({good.begin(), good.begin() + 10}), HasSubstr("shorter than the 44-byte header"));
  std::vector<std::uint8_t> bad = good;
  bad[0] ^= 1;
  EXPECT_THAT(state_error(bad), HasSubstr("bad magic"));
  bad = good;
  bad[4] = 2;
  EXPECT_THAT(state_error(bad), HasSubstr("format 2, expected 1"));
  EXPECT_THAT(state_error(good, {0xbeefULL, 3, 2}), HasSubstr("another model"));
  EXPECT_THAT(state_error(good, {0xbeefULL, 3, 2}), HasSubstr("(test model)"));
  EXPECT_THAT(state_error(good, {kStateShape.identity, 4, 2}), HasSubstr("2 vectors of 3 values, expected 2 of 4"));
  EXPECT_THAT(state_error({good.begin(), good.end() - 1}), HasSubstr("(truncated)"));
  bad = good;
  bad.push_back(0);
  EXPECT_THAT(state_error(bad), HasSubstr("(trailing bytes)"));
  bad = good;
  bad[50] ^= 0x10;  // a value's byte: the checksum no longer matches
  EXPECT_THAT(state_error(bad), HasSubstr("checksum mismatch"));
  LearnerState nan = sample_state();
  nan.vectors[1][2] = std::nanf("");
  EXPECT_THAT(state_error(encode_learner_state(kStateShape.identity, nan)), HasSubstr("vector 1 holds non-finite values"));
}

}  // namespace
}  // namespace swarmlab::learn
