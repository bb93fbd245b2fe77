#pragma once
// What every member of one averaging round agrees on before it starts: who takes part, with what
// weight, which span of the flattened vector each member reduces, and how it travels.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/averaging/centered_clip.h"
#include "core/codec/codec.h"
#include "core/env.h"

namespace swarmlab::core::averaging {

// hivemind's part size: each span is streamed in parts of at most 512 KiB after compression.
inline constexpr std::uint64_t kDefaultPartBytes = 512 * 1024;

struct RoundPlan {
  std::uint64_t round_id = 0;
  std::vector<PeerId> members;              // same order at every member
  // Per member; 0 = sends nothing (auxiliary reducer). A sender's parts carry its own entry, and
  // reducers weight each part by what it carries: a member may set its own weight when it starts.
  std::vector<double> weights;
  std::vector<std::uint64_t> span_begin;    // members + 1 entries; member j reduces [begin[j], begin[j+1])
  codec::Codec codec = codec::Codec::Fp32;
  std::uint64_t part_bytes = kDefaultPartBytes;
  // Optional pacing, members × members row-major: the rate (bits/s) of the connection from member
  // i to member j during the round (Environment::set_pacing). Empty, or 0 for a pair, means "as
  // fast as the network allows". The planner's a_ij + g_ij go here: fair sharing alone would split
  // a peer's upload evenly across its streams, not in the proportions the LP found optimal.
  // Shared and never modified: every member of a round holds a copy of the plan, and copying the
  // matrix into each cost O(members³) bytes a round (a third of a 132-peer run's time).
  std::shared_ptr<const std::vector<double>> pace_bps;
  // Robust aggregation: reducers take the CenteredClip of each part's contributions instead of
  // their weighted mean (docs/trust.md §3). Rounds that carry no values have nothing to clip.
  std::optional<CenteredClip> clip;
  // An all-reduce that gives its participants places (halving-doubling): the members that send,
  // as indices, in the order they take them; empty: plan order.
  std::vector<std::uint32_t> exchange_order;

  std::uint64_t length() const { return span_begin.empty() ? 0 : span_begin.back(); }
  std::size_t size() const { return members.size(); }
  std::optional<std::size_t> index_of(PeerId peer) const;
  bool sends(std::size_t member) const { return weights[member] > 0; }
  std::uint64_t span_length(std::size_t member) const { return span_begin[member + 1] - span_begin[member]; }
  // The share of the vector this member reduces (0 for an empty vector).
  double span_share(std::size_t member) const {
    return length() ? static_cast<double>(span_length(member)) / static_cast<double>(length()) : 0;
  }
  // Elements in one full part: the most whose encoding fits in part_bytes.
  std::uint64_t elements_per_part() const;
  std::uint32_t parts_in_span(std::size_t member) const;
  // Element range [first, first + count) of part `part` of member's span.
  std::uint64_t part_first(std::size_t member, std::uint32_t part) const;
  std::uint64_t part_count(std::size_t member, std::uint32_t part) const;
  std::size_t sender_count() const;
  bool paced() const { return pace_bps && !pace_bps->empty(); }
  double pace(std::size_t from, std::size_t to) const { return paced() ? (*pace_bps)[from * size() + to] : 0; }

  // Throws std::invalid_argument unless the plan is self-consistent.
  void validate() const;
};

// Splits `length` elements into spans proportional to `fractions` (largest remainder rule, as in
// hivemind's Hagenbach-Bischoff apportionment). Ties go to the lower index, so every member
// computes the same spans. Returns members + 1 span boundaries.
std::vector<std::uint64_t> apportion(std::uint64_t length, std::span<const double> fractions);

}  // namespace swarmlab::core::averaging
