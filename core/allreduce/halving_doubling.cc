#include "core/allreduce/halving_doubling.h"

#include <stdexcept>

namespace swarmlab::core::allreduce {

HalvingDoubling::HalvingDoubling(std::uint32_t participants) : participants_(participants) {
  if (participants == 0) throw std::invalid_argument("halving-doubling: needs at least one participant");
  while (core_ <= participants_ / 2) {
    core_ *= 2;
    ++levels_;
  }
}

void HalvingDoubling::check(std::uint32_t g, std::uint32_t step) const {
  if (g >= participants_ || step >= steps()) throw std::out_of_range("halving-doubling: participant or step");
}

std::optional<std::uint32_t> HalvingDoubling::exchange_step(std::uint32_t step) const {
  if (!folded()) return step;
  if (step == 0 || step == steps() - 1) return std::nullopt;
  return step - 1;
}

bool HalvingDoubling::merges(std::uint32_t step) const {
  const auto s = exchange_step(step);
  return s ? *s < levels_ : step == 0;
}

std::optional<std::uint32_t> HalvingDoubling::partner(std::uint32_t g, std::uint32_t step) const {
  check(g, step);
  const auto s = exchange_step(step);
  if (!s) {  // folding or serving: extra Q + i with participant i
    if (g >= core_) return g - core_;
    if (g < extras()) return g + core_;
    return std::nullopt;
  }
  if (g >= core_) return std::nullopt;
  const std::uint32_t distance = *s < levels_ ? core_ >> (*s + 1) : 1u << (*s - levels_);
  return g ^ distance;
}

BlockRange HalvingDoubling::sent(std::uint32_t g, std::uint32_t step) const {
  if (!partner(g, step)) return {};
  const auto s = exchange_step(step);
  if (!s) {
    // Folding: the extra sends everything; serving: its partner sends the result back.
    const bool sends = step == 0 ? g >= core_ : g < core_;
    return sends ? BlockRange{0, core_} : BlockRange{};
  }
  if (*s < levels_) {
    const std::uint32_t region = core_ >> *s, half = region >> 1;
    const std::uint32_t first = g & ~(region - 1);
    // Keep the half with our own block; send the other one.
    return (g & half) ? BlockRange{first, half} : BlockRange{first + half, half};
  }
  const std::uint32_t region = 1u << (*s - levels_);
  return BlockRange{g & ~(region - 1), region};
}

BlockRange HalvingDoubling::received(std::uint32_t g, std::uint32_t step) const {
  const auto p = partner(g, step);
  return p ? sent(*p, step) : BlockRange{};
}

}  // namespace swarmlab::core::allreduce
