// Choosing experts by beam search over the DHT (core/dmoe/beam_search.h), with runtimes announcing
// their experts (core/dmoe/expert_announcer.h), in a swarm of DHT peers (support/dht_swarm.h).
#include "core/dmoe/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/dmoe/expert_announcer.h"
#include "core/rng.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::dmoe {
namespace {

using Scores = std::vector<std::vector<double>>;
using Live = std::map<ExpertUid, PeerId>;  // announced uid -> its runtime

double score_of(const Scores& s, const ExpertUid& uid) {
  double v = 0;
  for (std::size_t i = 0; i < uid.size(); ++i) v += s[i][uid[i]];
  return v;
}

bool better(const std::pair<double, ExpertUid>& a, const std::pair<double, ExpertUid>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

// The k best live experts by additive score, by brute force (ties: the smaller uid first).
std::vector<ChosenExpert> top_k(const Live& live, const Scores& s, std::size_t k) {
  std::vector<std::pair<double, ExpertUid>> all;
  for (const auto& [uid, runtime] : live) all.emplace_back(score_of(s, uid), uid);
  std::sort(all.begin(), all.end(), better);
  std::vector<ChosenExpert> out;
  for (std::size_t i = 0; i < std::min(k, all.size()); ++i) out.push_back({all[i].second, live.at(all[i].second), all[i].first});
  return out;
}

// What a beam of width k keeps level by level over the live prefixes, written out on the live set.
std::vector<ChosenExpert> reference_beam(const Live& live, const Scores& s, std::size_t k, std::size_t dims) {
  std::vector<ExpertUid> beam{{}};
  for (std::size_t level = 0; level < dims; ++level) {
    std::set<ExpertUid> next;
    for (const auto& [uid, runtime] : live) {
      const ExpertUid parent(uid.begin(), uid.begin() + static_cast<std::ptrdiff_t>(level));
      if (std::find(beam.begin(), beam.end(), parent) != beam.end())
        next.insert(ExpertUid(uid.begin(), uid.begin() + static_cast<std::ptrdiff_t>(level + 1)));
    }
    std::vector<std::pair<double, ExpertUid>> scored;
    for (const ExpertUid& p : next) scored.emplace_back(score_of(s, p), p);
    std::sort(scored.begin(), scored.end(), better);
    beam.clear();
    for (std::size_t i = 0; i < std::min(k, scored.size()); ++i) beam.push_back(scored[i].second);
  }
  std::vector<ChosenExpert> out;
  for (const ExpertUid& uid : beam) out.push_back({uid, live.at(uid), score_of(s, uid)});
  return out;
}

void expect_same(const std::vector<ChosenExpert>& got, const std::vector<ChosenExpert>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].uid, want[i].uid) << i;
    EXPECT_EQ(got[i].runtime, want[i].runtime) << i;
    EXPECT_DOUBLE_EQ(got[i].score, want[i].score) << i;
  }
}

Scores random_scores(Rng& rng, const ExpertGrid& g) {
  Scores s(g.dims, std::vector<double>(g.side));
  for (auto& row : s)
    for (double& v : row) v = rng.normal();
  return s;
}

const AnnounceConfig kAnnounce{20.0, 5.0};

// Twelve DHT peers; runtimes on some of them announce the uids given.
struct Swarm {
  explicit Swarm(ExpertGrid g) : grid(std::move(g)), swarm(std::vector<double>(12, 1.0)) {}

  void announce(PeerId runtime, std::vector<ExpertUid> uids) {
    auto a = std::make_unique<ExpertAnnouncer>(swarm.env(runtime), *swarm.nodes[runtime], grid, kAnnounce);
    for (const ExpertUid& u : uids) live[u] = runtime;
    a->start([uids] { return uids; });
    announcers[runtime] = std::move(a);
  }
  void stop(PeerId runtime) {
    announcers.at(runtime)->stop();
    std::erase_if(live, [runtime](const auto& e) { return e.second == runtime; });
  }
  BeamSearchResult search(PeerId from, const Scores& scores, std::size_t k) {
    std::optional<BeamSearchResult> result;
    beam_search(swarm.env(from), *swarm.nodes[from], grid, scores, k, [&](BeamSearchResult r) { result = std::move(r); });
    EXPECT_FALSE(result.has_value());  // never inside the call
    swarm.run_for(5);
    EXPECT_TRUE(result.has_value());
    return result ? std::move(*result) : BeamSearchResult{};
  }

  ExpertGrid grid;
  testing::DhtSwarm swarm;
  Live live;
  std::map<PeerId, std::unique_ptr<ExpertAnnouncer>> announcers;
};

constexpr PeerId kSearcher = 10;

TEST(BeamSearch, FindsTheBestLiveExpertsAndTheirRuntimes) {
  Swarm s(ExpertGrid{"ffn", 3, 6});
  // Live: {1, 3, 4} × {0, 5} × {2, 4}, spread over four runtimes. On a product of coordinate sets
  // a beam of width k keeps every prefix of the k best, so the search is exact.
  std::vector<ExpertUid> all;
  for (std::uint32_t a : {1u, 3u, 4u})
    for (std::uint32_t b : {0u, 5u})
      for (std::uint32_t c : {2u, 4u}) all.push_back({a, b, c});
  std::map<PeerId, std::vector<ExpertUid>> hosted;
  for (std::size_t i = 0; i < all.size(); ++i) hosted[static_cast<PeerId>(2 + i % 4)].push_back(all[i]);
  for (const auto& [runtime, uids] : hosted) s.announce(runtime, uids);
  s.swarm.run_for(3);
  for (const auto& [runtime, a] : s.announcers) {
    EXPECT_EQ(a->stats().rounds, 1u);
    EXPECT_EQ(a->stats().stores_ok, a->stats().stores) << runtime;
  }
  Rng rng(42);
  for (int trial = 0; trial < 6; ++trial) {
    const Scores scores = random_scores(rng, s.grid);
    for (const std::size_t k : {1u, 4u}) {
      const BeamSearchResult r = s.search(kSearcher, scores, k);
      const auto want = top_k(s.live, scores, k);
      expect_same(reference_beam(s.live, scores, k, 3), want);
      expect_same(r.experts, want);
      EXPECT_LE(r.lookups, 1 + k * (3 - 1));
      EXPECT_EQ(r.lookups, 1 + std::min<std::size_t>(k, 3) + std::min<std::size_t>(k, 6));
      EXPECT_EQ(r.failed_lookups, 0u);
      EXPECT_GT(r.latency_s, 0.0);
    }
  }
  // Asking for more than there are returns every live expert, best first.
  const Scores scores = random_scores(rng, s.grid);
  const BeamSearchResult r = s.search(kSearcher, scores, 20);
  expect_same(r.experts, top_k(s.live, scores, 20));
  EXPECT_EQ(r.experts.size(), 12u);
}

TEST(BeamSearch, WalksTheBeamOverSparseAnnouncements) {
  Swarm s(ExpertGrid{"moe", 2, 8});
  Rng pick(7);
  std::set<ExpertUid> uids;
  while (uids.size() < 10) uids.insert({static_cast<std::uint32_t>(pick.below(8)), static_cast<std::uint32_t>(pick.below(8))});
  std::map<PeerId, std::vector<ExpertUid>> hosted;
  PeerId next = 1;
  for (const ExpertUid& u : uids) hosted[next++ % 3 + 1].push_back(u);
  for (const auto& [runtime, list] : hosted) s.announce(runtime, list);
  s.swarm.run_for(3);
  Rng rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    const Scores scores = random_scores(rng, s.grid);
    const BeamSearchResult r = s.search(kSearcher, scores, 3);
    expect_same(r.experts, reference_beam(s.live, scores, 3, 2));
    EXPECT_LE(r.lookups, 1u + 3u);
    // With a beam as wide as the live set it is the brute-force answer.
    const BeamSearchResult wide = s.search(kSearcher, scores, 10);
    expect_same(wide.experts, top_k(s.live, scores, 10));
  }
}

TEST(BeamSearch, IsABeamNotAnExhaustiveSearch) {
  // Live: (0, 0) and (1, 5). The first level prefers coordinate 0, so a beam of one never sees
  // (1, 5), the better expert overall (docs/learning-at-home.md §3: an approximation, as in the paper).
  Swarm s(ExpertGrid{"ffn", 2, 6});
  s.announce(3, {{0, 0}});
  s.announce(4, {{1, 5}});
  s.swarm.run_for(3);
  Scores scores(2, std::vector<double>(6, 0.0));
  scores[0][0] = 1;
  scores[1][5] = 10;
  const BeamSearchResult narrow = s.search(kSearcher, scores, 1);
  ASSERT_EQ(narrow.experts.size(), 1u);
  EXPECT_EQ(narrow.experts[0].uid, (ExpertUid{0, 0}));
  EXPECT_EQ(narrow.experts[0].runtime, 3u);
  const BeamSearchResult wide = s.search(kSearcher, scores, 2);
  expect_same(wide.experts, top_k(s.live, scores, 2));
  EXPECT_EQ(wide.experts[0].uid, (ExpertUid{1, 5}));
}

TEST(BeamSearch, ForgetsTheExpertsOfARuntimeThatStoppedAnnouncing) {
  Swarm s(ExpertGrid{"ffn", 2, 5});
  s.announce(2, {{0, 1}, {4, 4}});  // (4, *) is announced by peer 2 only
  s.announce(3, {{0, 2}, {1, 1}});
  s.announce(5, {{2, 0}, {3, 3}});
  s.swarm.run_for(3);
  Scores scores(2, std::vector<double>(5, 0.0));
  scores[0] = {0.5, 0.1, 0.2, 0.3, 2.0};
  scores[1] = {0.0, 1.0, 0.25, 0.5, 1.0};
  const BeamSearchResult before = s.search(kSearcher, scores, 6);
  EXPECT_EQ(before.experts.size(), 6u);
  EXPECT_EQ(before.experts[0].uid, (ExpertUid{4, 4}));
  EXPECT_EQ(before.experts[0].runtime, 2u);
  expect_same(before.experts, top_k(s.live, scores, 6));

  s.stop(2);
  // Still alive until its last announcement is alive_for_s old; the others keep announcing.
  s.swarm.run_for(kAnnounce.alive_for_s - 10);
  EXPECT_EQ(s.search(kSearcher, scores, 6).experts.size(), 6u);
  s.swarm.run_for(10);
  const BeamSearchResult after = s.search(kSearcher, scores, 6);
  expect_same(after.experts, top_k(s.live, scores, 6));
  ASSERT_EQ(after.experts.size(), 4u);
  for (const ChosenExpert& e : after.experts) EXPECT_NE(e.runtime, 2u);
  EXPECT_GE(s.announcers.at(3)->stats().rounds, 6u);
}

TEST(BeamSearch, BreaksTiesByTheSmallerUid) {
  Swarm s(ExpertGrid{"ffn", 2, 4});
  s.announce(2, {{2, 1}, {3, 3}});
  s.announce(3, {{1, 2}, {0, 0}});
  s.swarm.run_for(3);
  // (1, 2) and (2, 1) both score 3; (1, 2) is the smaller uid.
  Scores scores{{0, 2, 1, 0}, {0, 2, 1, 0}};
  const BeamSearchResult r = s.search(kSearcher, scores, 2);
  ASSERT_EQ(r.experts.size(), 2u);
  EXPECT_EQ(r.experts[0].uid, (ExpertUid{1, 2}));
  EXPECT_EQ(r.experts[0].runtime, 3u);
  EXPECT_EQ(r.experts[1].uid, (ExpertUid{2, 1}));
  EXPECT_EQ(r.experts[1].runtime, 2u);
  EXPECT_EQ(r.experts[0].score, r.experts[1].score);
  // All scores equal: the smallest uids, from every searcher alike.
  const Scores flat(2, std::vector<double>(4, 0.0));
  for (const PeerId from : {0u, 7u, 11u}) {
    const BeamSearchResult f = s.search(from, flat, 3);
    ASSERT_EQ(f.experts.size(), 3u);
    EXPECT_EQ(f.experts[0].uid, (ExpertUid{0, 0}));
    EXPECT_EQ(f.experts[1].uid, (ExpertUid{1, 2}));
    EXPECT_EQ(f.experts[2].uid, (ExpertUid{2, 1}));
  }
}

TEST(BeamSearch, FindsNothingInAnEmptyGrid) {
  Swarm s(ExpertGrid{"empty", 3, 4});
  s.announce(2, {{0, 0, 0}});
  const ExpertGrid other{"other", 3, 4};  // nothing announced under this layer
  std::optional<BeamSearchResult> result;
  beam_search(s.swarm.env(kSearcher), *s.swarm.nodes[kSearcher], other, Scores(3, std::vector<double>(4, 1.0)), 4,
              [&](BeamSearchResult r) { result = std::move(r); });
  s.swarm.run_for(5);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->experts.empty());
  EXPECT_EQ(result->lookups, 1u);
  EXPECT_EQ(result->failed_lookups, 1u);
}

TEST(BeamSearch, RejectsScoresOfTheWrongShapeAndAZeroBeam) {
  testing::DhtSwarm swarm({1, 1});
  const ExpertGrid g{"ffn", 2, 3};
  const auto none = [](BeamSearchResult) { FAIL() << "no search should run"; };
  Environment& env = swarm.env(0);
  EXPECT_THROW(beam_search(env, *swarm.nodes[0], g, Scores(2, std::vector<double>(3)), 0, none), std::invalid_argument);
  EXPECT_THROW(beam_search(env, *swarm.nodes[0], g, Scores(3, std::vector<double>(3)), 1, none), std::invalid_argument);
  EXPECT_THROW(beam_search(env, *swarm.nodes[0], g, Scores{{0, 0, 0}, {0, 0}}, 1, none), std::invalid_argument);
  EXPECT_THROW(beam_search(env, *swarm.nodes[0], ExpertGrid{"", 2, 3}, Scores(2, std::vector<double>(3)), 1, none),
               std::invalid_argument);
  EXPECT_THROW(ExpertAnnouncer(env, *swarm.nodes[0], g, AnnounceConfig{10, 10}), std::invalid_argument);
  EXPECT_THROW(ExpertAnnouncer(env, *swarm.nodes[0], g, AnnounceConfig{10, 0}), std::invalid_argument);
  swarm.run_for(1);
}

TEST(BeamSearch, RuntimeValuesRoundTrip) {
  for (const PeerId p : {0u, 1u, 300u, 0xFFFFFFFFu}) EXPECT_EQ(decode_runtime(encode_runtime(p)), p);
  EXPECT_FALSE(decode_runtime(std::vector<std::uint8_t>{}).has_value());
  EXPECT_FALSE(decode_runtime(std::vector<std::uint8_t>{1, 2}).has_value());
  EXPECT_FALSE(decode_runtime(std::vector<std::uint8_t>{0x80, 0x80, 0x80, 0x80, 0x10}).has_value());  // 2^32
}

}  // namespace
}  // namespace swarmlab::core::dmoe

namespace swarmlab::core::dmoe {
namespace {

// A runtime announces each leaf key once, listing every expert it hosts there, and one entry per
// distinct inner prefix: three experts under "ffn.2." and one under "ffn.5." are four stores.
TEST(BeamSearch, ARuntimeAnnouncesEachLeafKeyWithOneStore) {
  Swarm s(ExpertGrid{"ffn", 2, 8});
  s.announce(3, {{2, 1}, {2, 4}, {2, 7}, {5, 0}});
  s.swarm.run_for(3);
  EXPECT_EQ(s.announcers.at(3)->stats().stores, 4u);  // root/2, root/5, leaf ffn.2., leaf ffn.5.
  EXPECT_EQ(s.announcers.at(3)->stats().stores_ok, 4u);
  Scores scores(2, std::vector<double>(8, 0.0));
  scores[1][4] = 1;
  const BeamSearchResult r = s.search(kSearcher, scores, 4);
  ASSERT_EQ(r.experts.size(), 4u);
  EXPECT_EQ(r.experts[0].uid, (ExpertUid{2, 4}));
  for (const auto& e : r.experts) EXPECT_EQ(e.runtime, 3u);
}

// After a takeover of a runtime that was only slow, two runtimes host one expert: it is chosen
// once, through the smaller peer id.
TEST(BeamSearch, AnExpertHostedTwiceIsChosenOnceThroughTheSmallerPeer) {
  Swarm s(ExpertGrid{"ffn", 2, 4});
  s.announce(6, {{1, 2}});
  s.announce(4, {{1, 2}, {3, 3}});
  s.swarm.run_for(3);
  Scores scores(2, std::vector<double>(4, 0.0));
  scores[0][1] = 1;
  const BeamSearchResult r = s.search(kSearcher, scores, 4);
  ASSERT_EQ(r.experts.size(), 2u);
  EXPECT_EQ(r.experts[0].uid, (ExpertUid{1, 2}));
  EXPECT_EQ(r.experts[0].runtime, 4u);
  EXPECT_EQ(r.experts[1].uid, (ExpertUid{3, 3}));
}

}  // namespace
}  // namespace swarmlab::core::dmoe
