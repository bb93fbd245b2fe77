// CenteredClip on its own, and as the reducers' aggregate in a butterfly round (docs/trust.md §3).
#include "core/averaging/centered_clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "swarm_fixture.h"

namespace swarmlab::core::averaging {
namespace {

using testing::plan_for;
using testing::Swarm;
using testing::uniform_links;

// n rows of `length` floats: honest ones around `center` with unit noise, then `bad` rows far off.
std::vector<float> rows_with_outliers(std::size_t honest, std::size_t bad, std::size_t length, float center, float off,
                                      std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> rows;
  for (std::size_t i = 0; i < honest; ++i)
    for (std::size_t k = 0; k < length; ++k) rows.push_back(center + static_cast<float>(rng.normal()));
  for (std::size_t i = 0; i < bad; ++i)
    for (std::size_t k = 0; k < length; ++k) rows.push_back(off);
  return rows;
}

double distance(const std::vector<float>& a, float center) {
  double d = 0;
  for (float x : a) d += (x - center) * (x - center);
  return std::sqrt(d);
}

TEST(CenteredClip, WithARadiusWiderThanTheSpreadItIsTheWeightedMean) {
  const std::size_t n = 5, length = 64;
  const std::vector<float> rows = rows_with_outliers(n, 0, length, 2.0f, 0, 1);
  const std::vector<double> w = {1, 2, 1, 2, 2};  // every claim at or below the median (2)
  std::vector<float> out(length);
  EXPECT_EQ(centered_clip(rows, w, {1e9, 30}, out), 0u);
  for (std::size_t k = 0; k < length; ++k) {
    double mean = 0;
    for (std::size_t i = 0; i < n; ++i) mean += w[i] * rows[i * length + k] / 8.0;
    EXPECT_NEAR(out[k], mean, 1e-5) << k;
  }
}

TEST(CenteredClip, SevenOfSixteenFarOutliersMoveTheResultLittle) {
  const std::size_t length = 100;
  const std::vector<float> rows = rows_with_outliers(9, 7, length, 0.0f, 1000.0f, 2);
  const std::vector<double> w(16, 1.0);
  std::vector<float> clipped(length), mean(length, 0.0f);
  const std::size_t n_clipped = centered_clip(rows, w, {5.0, 20}, clipped);
  for (std::size_t i = 0; i < 16; ++i)
    for (std::size_t k = 0; k < length; ++k) mean[k] += rows[i * length + k] / 16.0f;
  EXPECT_GE(n_clipped, 7u);
  // The plain mean lands 7/16 of the way to the outliers (4,375 away); the clipped one where
  // nine honest pulls of at most tau balance seven: about 1.2 × the honest spread (√100 = 10),
  // however far the outliers are.
  EXPECT_GT(distance(mean, 0.0f), 4000);
  EXPECT_LT(distance(clipped, 0.0f), 2 * 10);
}

TEST(CenteredClip, AnInflatedWeightCountsAsTheMedianClaim) {
  const std::size_t length = 10;
  const std::vector<float> rows = rows_with_outliers(3, 1, length, 0.0f, 100.0f, 3);
  std::vector<float> honest_claim(length), inflated(length);
  centered_clip(rows, std::vector<double>{1, 1, 1, 1}, {1e9, 1}, honest_claim);
  centered_clip(rows, std::vector<double>{1, 1, 1, 1e6}, {1e9, 1}, inflated);
  EXPECT_EQ(honest_claim, inflated);
}

TEST(CenteredClip, ANonFiniteContributionIsLeftOut) {
  const std::size_t length = 8;
  std::vector<float> rows = rows_with_outliers(4, 0, length, 1.0f, 0, 4);
  std::vector<float> without(length), with(length);
  const std::size_t clipped = centered_clip(rows, std::vector<double>(4, 1.0), {2.0, 10}, without);
  rows.insert(rows.end(), length, 1.0f);
  rows[rows.size() - 3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(centered_clip(rows, std::vector<double>(5, 1.0), {2.0, 10}, with), clipped + 1);
  EXPECT_EQ(without, with);
  std::vector<float> all_bad(length, std::numeric_limits<float>::infinity()), out(length, 7.0f);
  EXPECT_EQ(centered_clip(all_bad, std::vector<double>{1}, {2.0, 10}, out), 1u);
  EXPECT_EQ(out, std::vector<float>(length, 0.0f));
}

TEST(CenteredClip, RejectsBadOptionsAndSizes) {
  EXPECT_THROW((CenteredClip{0, 10}.validate()), std::invalid_argument);
  EXPECT_THROW((CenteredClip{std::numeric_limits<double>::infinity(), 10}.validate()), std::invalid_argument);
  EXPECT_THROW((CenteredClip{1, 0}.validate()), std::invalid_argument);
  std::vector<float> out(3);
  EXPECT_THROW(centered_clip(std::vector<float>(5), std::vector<double>{1, 1}, {1, 1}, out), std::invalid_argument);
}

TEST(CenteredClipRound, EveryMemberEndsWithTheSameClippedAggregate) {
  // 16 members, 5 of them sending the honest vector's sign flipped and scaled up: with the clip,
  // every member holds the same bits, close to the honest mean; without it, far off.
  const std::size_t n = 16, bad = 5, length = 4'000;
  Rng rng(8);
  std::vector<float> truth(length);
  for (auto& t : truth) t = static_cast<float>(rng.normal());
  std::vector<std::vector<float>> values(n, std::vector<float>(length));
  std::vector<double> honest_mean(length, 0.0);
  for (std::size_t p = 0; p < n - bad; ++p)
    for (std::size_t k = 0; k < length; ++k) {
      values[p][k] = truth[k] + 0.1f * static_cast<float>(rng.normal());
      honest_mean[k] += values[p][k] / static_cast<double>(n - bad);
    }
  for (std::size_t p = n - bad; p < n; ++p)
    for (std::size_t k = 0; k < length; ++k) values[p][k] = -10.0f * truth[k];
  const auto error = [&](const std::vector<float>& x) {
    double d = 0, norm = 0;
    for (std::size_t k = 0; k < length; ++k) d += (x[k] - honest_mean[k]) * (x[k] - honest_mean[k]), norm += honest_mean[k] * honest_mean[k];
    return std::sqrt(d / norm);
  };

  for (const bool clip : {false, true}) {
    Swarm swarm(uniform_links(n, 1e8));
    auto v = values;
    RoundPlan plan = plan_for(std::vector<double>(n, 1.0), std::vector<double>(n, 1.0 / n), length);
    if (clip) plan.clip = CenteredClip{1.0, 20};  // wider than the honest spread per span (0.1 · √250)
    swarm.start(plan, &v);
    swarm.world->run();
    ASSERT_EQ(swarm.outcomes.size(), n);
    std::uint64_t clipped = 0;
    for (const auto& o : swarm.outcomes) {
      EXPECT_TRUE(o.completed);
      clipped += o.clipped_contributions;
    }
    for (std::size_t p = 1; p < n; ++p) ASSERT_EQ(v[p], v[0]) << "member " << p;
    if (clip) {
      EXPECT_GE(clipped, bad * n);  // every reducer clipped at least the five attackers
      EXPECT_LT(error(v[0]), 0.1);
    } else {
      EXPECT_EQ(clipped, 0u);
      EXPECT_GT(error(v[0]), 3.0);
    }
  }
}

// The clip's processor time where time is simulated (core/averaging/reduce_cost.h): every reducer
// clips its parts one after another, and each averaged part leaves when its clip is done. The
// values are those of a round that charges nothing.
TEST(CenteredClipRound, EachReplyWaitsForItsClipAndTheValuesDoNotChange) {
  const std::size_t n = 4, length = 4'096;  // 1,024 elements per span, 4 parts of 256 (1 KiB)
  const ReduceCost cost{1e-6, 1e-7};
  const CenteredClip clip{1.0, 10};
  // Per part: 256 elements × 4 contributions × (1 µs + 10 × 0.1 µs) = 2.048 ms.
  const Seconds per_part = cost.of_clip(256, n, clip.iterations);
  ASSERT_NEAR(per_part, 2.048e-3, 1e-12);
  Rng rng(21);
  std::vector<std::vector<float>> values(n, std::vector<float>(length));
  for (auto& v : values)
    for (auto& x : v) x = static_cast<float>(rng.normal());

  std::vector<std::vector<float>> result[2];
  Seconds finished[2] = {0, 0};
  for (const int charged : {0, 1}) {
    Swarm swarm(uniform_links(n, 1e9, 0.0), charged ? cost : ReduceCost{});
    result[charged] = values;
    RoundPlan plan = plan_for(std::vector<double>(n, 1.0), std::vector<double>(n, 1.0 / n), length,
                              codec::Codec::Fp32, 1024);
    plan.clip = clip;
    ASSERT_EQ(plan.parts_in_span(0), 4u);
    swarm.start(plan, &result[charged]);
    swarm.world->run();
    ASSERT_EQ(swarm.outcomes.size(), n);
    for (const auto& o : swarm.outcomes) {
      EXPECT_TRUE(o.completed);
      EXPECT_DOUBLE_EQ(o.fraction_averaged, 1.0);
      finished[charged] = std::max(finished[charged], o.finished);
    }
  }
  EXPECT_EQ(result[1], result[0]);
  // The network part of the round takes well under a millisecond at 1 Gb/s; each reducer's four
  // clips take 8.2 ms back to back, and overlap the network only while the last parts arrive.
  EXPECT_LT(finished[0], 1e-3);
  EXPECT_GE(finished[1], 4 * per_part);
  EXPECT_LE(finished[1], 4 * per_part + finished[0]);
}

TEST(CenteredClipRound, ARoundThatTimesOutWhileClippingSendsNothingMore) {
  // The clips take longer than the round is given: every member fails the round with its own
  // span unaveraged, and no reply leaves after it (the memory world runs dry without a send to a
  // round that is gone).
  const std::size_t n = 4, length = 4'096;
  const ReduceCost cost{1e-5, 0};  // 10.24 ms per part of 256 elements × 4 contributions
  Swarm swarm(uniform_links(n, 1e9, 0.0), cost);
  std::vector<std::vector<float>> values(n, std::vector<float>(length, 1.0f));
  RoundPlan plan = plan_for(std::vector<double>(n, 1.0), std::vector<double>(n, 1.0 / n), length,
                            codec::Codec::Fp32, 1024);
  plan.clip = CenteredClip{1.0, 1};
  Timeouts timeouts;
  timeouts.round = 0.015;  // the first part's reply leaves at about 10 ms, the second at 20 ms
  swarm.start(plan, &values, timeouts);
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), n);
  for (std::size_t m = 0; m < n; ++m) {
    const RoundOutcome& o = swarm.outcomes[m];
    EXPECT_FALSE(o.completed);
    // One part of four came back from every reducer, its own included.
    EXPECT_DOUBLE_EQ(o.fraction_averaged, 0.25);
    EXPECT_EQ(o.unaveraged_spans.size(), n);
  }
  for (const auto& s : swarm.services) EXPECT_EQ(s->dropped_messages() + s->malformed_messages(), 0u);
}

TEST(CenteredClipRound, AMemberSendingNaNsIsLeftOutOfEveryPart) {
  // With the mean, one NaN poisons the whole round; with the clip, every part leaves it out.
  const std::size_t n = 5, length = 1'000;
  Rng rng(12);
  std::vector<std::vector<float>> values(n, std::vector<float>(length));
  for (auto& v : values)
    for (auto& x : v) x = static_cast<float>(rng.normal());
  values[4].assign(length, std::numeric_limits<float>::quiet_NaN());
  Swarm swarm(uniform_links(n, 1e8));
  RoundPlan plan = plan_for(std::vector<double>(n, 1.0), std::vector<double>(n, 1.0 / n), length);
  plan.clip = CenteredClip{100.0, 5};  // wide: the finite members are averaged exactly
  auto v = values;
  swarm.start(plan, &v);
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), n);
  for (std::size_t k = 0; k < length; ++k) {
    const double mean = (values[0][k] + values[1][k] + values[2][k] + values[3][k]) / 4.0;
    for (std::size_t p = 0; p < n; ++p) ASSERT_NEAR(v[p][k], mean, 1e-5) << "member " << p << " element " << k;
  }
}

}  // namespace
}  // namespace swarmlab::core::averaging
