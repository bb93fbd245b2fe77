#pragma once
// Random churn for a live training run (`swarmlab launch --train --chaos`), modelled on kill/spawn
// stress tests: from `from_s` until `until_s`, every gap_min_s..gap_max_s seconds (uniform) a
// random peer that is up is SIGKILLed, or one that is down is started again (a new incarnation of
// the same identity), with even odds when both are possible. The first `backbones` peers are
// backbones: any of them may be killed, but one always stays up. No kill leaves fewer than
// `min_up` peers up, so that the collaboration can still step. Decisions only: the launcher
// sends the signals and starts the processes. The same seed gives the same decisions for the same
// answers to "who is up".
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/rng.h"

namespace swarmlab::exec {

struct RandomChurnSpec {
  double from_s = 10;       // let the collaboration form first
  double until_s = 60;
  double gap_min_s = 2, gap_max_s = 10;
  std::size_t backbones = 1;
  std::size_t min_up = 3;
  double calm_s = 20;       // after the churn, before every peer is asked to leave
  double grace_s = 30;      // how long peers have to leave (then SIGKILL)
  std::uint64_t seed = 1;
};

struct ChurnAction {
  enum class Kind { Kill, Start } kind = Kind::Kill;
  std::size_t peer = 0;
};

class RandomChurn {
 public:
  // Throws std::invalid_argument for an empty or inverted window or gap, or no backbone.
  explicit RandomChurn(RandomChurnSpec spec);

  // The action due at `now`, if one is (at most one per call); `up[i]`: peer i is running.
  std::optional<ChurnAction> poll(double now, const std::vector<bool>& up);
  // When every peer is asked to leave.
  double leave_at() const { return spec_.until_s + spec_.calm_s; }
  const RandomChurnSpec& spec() const { return spec_; }

 private:
  RandomChurnSpec spec_;
  core::Rng rng_;
  double next_s_;
};

}  // namespace swarmlab::exec
