#pragma once
// Choosing a layer's experts (docs/learning-at-home.md §3): beam search over the uid grid with an
// additive gate, checking liveness in the DHT.
//
// The gate gives one score vector of length M per grid dimension; an expert's score is the sum of
// its coordinates' scores. Starting from the empty prefix, each level looks up every prefix in the
// beam (one DHT get each), whose dictionary names the live continuations one coordinate longer
// (expert_grid.h); every live continuation is scored and the k best form the next beam. At the
// last level the dictionary's entries name the runtimes and the experts each hosts; an expert
// hosted twice (a takeover of a runtime that was only slow) is reached through the smaller peer id. A search therefore costs
// 1 + k·(d−1) lookups at most, within the O(d·k·M) of the paper's description, which checks each of
// the M continuations separately. Ties are broken by the smaller uid, so every trainer that sees the
// same DHT makes the same choice.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/dht/node.h"
#include "core/dmoe/expert_grid.h"
#include "core/dmoe/mixture.h"
#include "core/env.h"

namespace swarmlab::core::dmoe {

struct BeamSearchResult {
  std::vector<ChosenExpert> experts;  // best first, at most k
  std::size_t lookups = 0;            // DHT gets issued
  std::size_t failed_lookups = 0;     // of which found nothing (no live continuation, or lost)
  Seconds latency_s = 0;
};

// scores[i][c]: the gate's score of coordinate c in dimension i (dims × side). `done` runs later,
// never inside the call. std::invalid_argument for scores of the wrong shape or k = 0.
void beam_search(Environment& env, dht::DhtNode& dht, const ExpertGrid& grid, std::vector<std::vector<double>> scores,
                 std::size_t k, std::function<void(BeamSearchResult)> done);

}  // namespace swarmlab::core::dmoe
