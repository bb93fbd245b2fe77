#pragma once
// Hydra's reward for compute (docs/hydra.md §3): in every step, machine m is credited
//
//   VCU_m = sigmoid(t_b − t_m) · A_m
//
// Virtual Compute Units, where t_b and t_m are the seconds one sample takes on the reference
// machine (Hydra's bootstrap server) and on m, and A_m the samples m contributed to the step. A
// machine as fast as the reference earns 0.5 per sample; faster ones earn more, slower ones less.
// The coin ledger keeps each peer's balance (one coin per VCU).
#include <cstdint>
#include <map>

#include "core/types.h"

namespace swarmlab::core::training {

// VCU for `samples` from a machine taking `machine_s_per_sample` against `reference_s_per_sample`.
// Throws std::invalid_argument unless both times are positive and finite.
double compute_units(double reference_s_per_sample, double machine_s_per_sample, std::uint64_t samples);

class CoinLedger {
 public:
  // Credits `peer` for `samples` it contributed to a step.
  void credit_step(PeerId peer, double reference_s_per_sample, double machine_s_per_sample, std::uint64_t samples);
  double balance(PeerId peer) const;
  double total() const { return total_; }
  std::uint64_t samples(PeerId peer) const;
  const std::map<PeerId, double>& balances() const { return balance_; }

 private:
  std::map<PeerId, double> balance_;
  std::map<PeerId, std::uint64_t> samples_;
  double total_ = 0;
};

}  // namespace swarmlab::core::training
