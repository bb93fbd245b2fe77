#include "exec/random_churn.h"

#include <stdexcept>

namespace swarmlab::exec {

RandomChurn::RandomChurn(RandomChurnSpec spec) : spec_(spec), rng_(spec.seed, 0xc4a05), next_s_(spec.from_s) {
  if (!(spec_.from_s >= 0) || !(spec_.until_s > spec_.from_s))
    throw std::invalid_argument("churn: need 0 <= from < until");
  if (!(spec_.gap_min_s > 0) || !(spec_.gap_max_s >= spec_.gap_min_s))
    throw std::invalid_argument("churn: need 0 < gap_min <= gap_max");
  if (spec_.backbones == 0) throw std::invalid_argument("churn: need at least one backbone peer");
  if (!(spec_.calm_s >= 0) || !(spec_.grace_s > 0)) throw std::invalid_argument("churn: need calm >= 0 and grace > 0");
}

std::optional<ChurnAction> RandomChurn::poll(double now, const std::vector<bool>& up) {
  if (now < next_s_ || now >= spec_.until_s) return std::nullopt;
  next_s_ = now + spec_.gap_min_s + rng_.uniform() * (spec_.gap_max_s - spec_.gap_min_s);
  std::vector<std::size_t> killable, startable;
  std::size_t running = 0, backbones_up = 0;
  for (std::size_t i = 0; i < up.size(); ++i) {
    running += up[i];
    backbones_up += up[i] && i < spec_.backbones;
  }
  for (std::size_t i = 0; i < up.size(); ++i) {
    if (!up[i]) startable.push_back(i);
    else if (running > spec_.min_up && (i >= spec_.backbones || backbones_up > 1)) killable.push_back(i);
  }
  if (killable.empty() && startable.empty()) return std::nullopt;
  const bool kill = startable.empty() || (!killable.empty() && rng_.below(2) == 0);
  const std::vector<std::size_t>& from = kill ? killable : startable;
  return ChurnAction{kill ? ChurnAction::Kind::Kill : ChurnAction::Kind::Start, from[rng_.below(from.size())]};
}

}  // namespace swarmlab::exec
