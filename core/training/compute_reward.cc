#include "core/training/compute_reward.h"

#include <cmath>
#include <stdexcept>

namespace swarmlab::core::training {

double compute_units(double reference_s_per_sample, double machine_s_per_sample, std::uint64_t samples) {
  if (!(reference_s_per_sample > 0) || !std::isfinite(reference_s_per_sample) || !(machine_s_per_sample > 0) ||
      !std::isfinite(machine_s_per_sample))
    throw std::invalid_argument("compute units: seconds per sample must be positive and finite");
  const double x = reference_s_per_sample - machine_s_per_sample;
  const double sigmoid = 1 / (1 + std::exp(-x));
  return sigmoid * static_cast<double>(samples);
}

void CoinLedger::credit_step(PeerId peer, double reference_s_per_sample, double machine_s_per_sample,
                             std::uint64_t samples) {
  const double v = compute_units(reference_s_per_sample, machine_s_per_sample, samples);
  balance_[peer] += v;
  samples_[peer] += samples;
  total_ += v;
}

double CoinLedger::balance(PeerId peer) const {
  const auto it = balance_.find(peer);
  return it == balance_.end() ? 0 : it->second;
}

std::uint64_t CoinLedger::samples(PeerId peer) const {
  const auto it = samples_.find(peer);
  return it == samples_.end() ? 0 : it->second;
}

}  // namespace swarmlab::core::training
