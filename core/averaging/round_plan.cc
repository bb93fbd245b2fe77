#include "core/averaging/round_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace swarmlab::core::averaging {

std::optional<std::size_t> RoundPlan::index_of(PeerId peer) const {
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i] == peer) return i;
  return std::nullopt;
}

std::uint64_t RoundPlan::elements_per_part() const { return codec::elements_fitting(codec, part_bytes); }

std::uint32_t RoundPlan::parts_in_span(std::size_t member) const {
  const std::uint64_t per = elements_per_part();
  return static_cast<std::uint32_t>((span_length(member) + per - 1) / per);
}

std::uint64_t RoundPlan::part_first(std::size_t member, std::uint32_t part) const {
  return span_begin[member] + static_cast<std::uint64_t>(part) * elements_per_part();
}

std::uint64_t RoundPlan::part_count(std::size_t member, std::uint32_t part) const {
  const std::uint64_t first = part_first(member, part);
  return std::min(elements_per_part(), span_begin[member + 1] - first);
}

std::size_t RoundPlan::sender_count() const {
  return static_cast<std::size_t>(std::count_if(weights.begin(), weights.end(), [](double w) { return w > 0; }));
}

void RoundPlan::validate() const {
  if (members.empty()) throw std::invalid_argument("round plan: no members");
  if (weights.size() != members.size()) throw std::invalid_argument("round plan: one weight per member expected");
  if (span_begin.size() != members.size() + 1 || span_begin.front() != 0)
    throw std::invalid_argument("round plan: members + 1 span boundaries starting at 0 expected");
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (span_begin[i + 1] < span_begin[i]) throw std::invalid_argument("round plan: span boundaries must not decrease");
    if (!(weights[i] >= 0) || !std::isfinite(weights[i]))
      throw std::invalid_argument("round plan: weights must be finite and >= 0");
    for (std::size_t j = 0; j < i; ++j)
      if (members[i] == members[j]) throw std::invalid_argument("round plan: duplicate member " + std::to_string(members[i]));
  }
  if (sender_count() == 0) throw std::invalid_argument("round plan: nobody sends a vector");
  if (paced()) {
    if (pace_bps->size() != members.size() * members.size())
      throw std::invalid_argument("round plan: pacing needs members × members rates");
    for (double r : *pace_bps)
      if (!(r >= 0) || std::isnan(r)) throw std::invalid_argument("round plan: pacing rates must be >= 0");
  }
  if (clip) clip->validate();
  if (!exchange_order.empty()) {
    std::vector<bool> placed(members.size(), false);
    for (std::uint32_t k : exchange_order) {
      if (k >= members.size() || !sends(k) || placed[k])
        throw std::invalid_argument("round plan: the exchange order must list every sender once");
      placed[k] = true;
    }
    if (exchange_order.size() != sender_count())
      throw std::invalid_argument("round plan: the exchange order must list every sender once");
  }
}

std::vector<std::uint64_t> apportion(std::uint64_t length, std::span<const double> fractions) {
  const double total = std::accumulate(fractions.begin(), fractions.end(), 0.0);
  if (fractions.empty() || !(total > 0)) throw std::invalid_argument("apportion: fractions must sum to > 0");
  std::vector<std::uint64_t> counts(fractions.size());
  std::vector<std::pair<double, std::size_t>> remainders;
  std::uint64_t assigned = 0;
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    if (!(fractions[i] >= 0)) throw std::invalid_argument("apportion: fractions must be >= 0");
    const double exact = static_cast<double>(length) * fractions[i] / total;
    counts[i] = static_cast<std::uint64_t>(std::floor(exact));
    assigned += counts[i];
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; assigned < length; ++k, ++assigned) {
    // Only members with a positive fraction may receive leftover elements.
    while (fractions[remainders[k % remainders.size()].second] <= 0) ++k;
    ++counts[remainders[k % remainders.size()].second];
  }
  std::vector<std::uint64_t> begin(fractions.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) begin[i + 1] = begin[i] + counts[i];
  return begin;
}

}  // namespace swarmlab::core::averaging
