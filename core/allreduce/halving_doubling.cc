#include "core/allreduce/halving_doubling.h"

#include <stdexcept>

namespace swarmlab::core::allreduce {

HalvingDoubling::HalvingDoubling(std::uint32_t participants) : participants_(participants) {
  if (participants == 0 || (participants & (participants - 1)) != 0)
    throw std::invalid_argument("halving-doubling: the participants must be a power of two");
  while ((1u << levels_) < participants) ++levels_;
}

std::uint32_t HalvingDoubling::partner(std::uint32_t g, std::uint32_t step) const {
  if (g >= participants_ || step >= steps()) throw std::out_of_range("halving-doubling: participant or step");
  const std::uint32_t distance = is_halving(step) ? participants_ >> (step + 1) : 1u << (step - levels_);
  return g ^ distance;
}

BlockRange HalvingDoubling::sent(std::uint32_t g, std::uint32_t step) const {
  if (g >= participants_ || step >= steps()) throw std::out_of_range("halving-doubling: participant or step");
  if (is_halving(step)) {
    const std::uint32_t region = participants_ >> step, half = region >> 1;
    const std::uint32_t first = g & ~(region - 1);
    // Keep the half with our own block; send the other one.
    return (g & half) ? BlockRange{first, half} : BlockRange{first + half, half};
  }
  const std::uint32_t region = 1u << (step - levels_);
  return BlockRange{g & ~(region - 1), region};
}

}  // namespace swarmlab::core::allreduce
