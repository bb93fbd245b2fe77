#include "learn/expert_checkpoint.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/dmoe/expert_backend.h"

namespace swarmlab::learn {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kExpertWidth = 2, kExpertHidden = 3;

ExpertCheckpoint sample_checkpoint() {
  ExpertCheckpoint c;
  c.updates = 9;
  const std::uint64_t n = expert_checkpoint_values(kExpertWidth, kExpertHidden);
  for (std::uint64_t i = 0; i < n; ++i) {
    c.params.push_back(static_cast<float>(i));
    c.adam_m.push_back(100.0f + static_cast<float>(i));
    c.adam_v.push_back(200.0f + static_cast<float>(i));
  }
  return c;
}

std::string checkpoint_error(const std::vector<std::uint8_t>& bytes, std::uint32_t width = kExpertWidth) {
  try {
    decode_expert_checkpoint(bytes, width, kExpertHidden);
  } catch (const core::dmoe::CheckpointError& e) {
    return e.what();
  }
  return "";
}

float checkpoint_value_at(const std::vector<std::uint8_t>& bytes, std::size_t index) {
  float v;
  std::memcpy(&v, bytes.data() + 24 + 4 * index, 4);
  return v;
}

TEST(ExpertCheckpoint, RoundTripsWithEachTensorsMomentsSideBySide) {
  EXPECT_EQ(expert_checkpoint_values(kExpertWidth, kExpertHidden), 2u * 2 * 3 + 3 + 2);
  const std::vector<std::uint8_t> bytes = encode_expert_checkpoint(kExpertWidth, kExpertHidden, sample_checkpoint());
  ASSERT_EQ(bytes.size(), 24u + 3 * 17 * 4);
  // After the 17 parameters: m then v of w1 (6 values each), then m and v of b1 (3 each), ...
  EXPECT_EQ(checkpoint_value_at(bytes, 16), 16.0f);
  EXPECT_EQ(checkpoint_value_at(bytes, 17), 100.0f);
  EXPECT_EQ(checkpoint_value_at(bytes, 23), 200.0f);
  EXPECT_EQ(checkpoint_value_at(bytes, 29), 106.0f);
  const ExpertCheckpoint back = decode_expert_checkpoint(bytes, kExpertWidth, kExpertHidden);
  EXPECT_EQ(back.updates, 9u);
  EXPECT_EQ(back.params, sample_checkpoint().params);
  EXPECT_EQ(back.adam_m, sample_checkpoint().adam_m);
  EXPECT_EQ(back.adam_v, sample_checkpoint().adam_v);
}

TEST(ExpertCheckpoint, EveryDefectIsACheckpointErrorThatSaysWhich) {
  const std::vector<std::uint8_t> good = encode_expert_checkpoint(kExpertWidth, kExpertHidden, sample_checkpoint());
  EXPECT_THAT(checkpoint_error({good.begin(), good.begin() + 20}), HasSubstr("no \"SWEX\" header"));
  std::vector<std::uint8_t> bad = good;
  bad[4] = 3;
  EXPECT_THAT(checkpoint_error(bad), HasSubstr("format 3, expected 1"));
  EXPECT_THAT(checkpoint_error(good, 4), HasSubstr("an expert of width 2 and hidden 3, expected 4 and 3"));
  EXPECT_THAT(checkpoint_error({good.begin(), good.end() - 1}), HasSubstr("bytes, expected 228"));
  ExpertCheckpoint inf = sample_checkpoint();
  inf.adam_v.back() = INFINITY;
  EXPECT_THAT(checkpoint_error(encode_expert_checkpoint(kExpertWidth, kExpertHidden, inf)), HasSubstr("not finite"));
}

}  // namespace
}  // namespace swarmlab::learn
