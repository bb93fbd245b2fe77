#pragma once
// The communication schedule of recursive halving then recursive doubling over P = 2^L
// participants (docs/hydra.md §5). The vector is cut into P equal blocks.
// - Halving step s (0 <= s < L): participant g pairs with g xor P/2^(s+1). Both hold the same
//   region of P/2^s blocks; each keeps the half that contains its own block, sends the other half
//   and reduces what it receives into the half it kept. After L steps g holds block g, reduced over
//   everyone.
// - Doubling step L + t (0 <= t < L): g pairs with g xor 2^t, sends its region of 2^t blocks
//   (the aligned run that contains block g) and receives its partner's, doubling the region.
// 2L steps in all; every participant sends and receives the same amount at each step.
#include <cstdint>

namespace swarmlab::core::allreduce {

// A run of whole blocks: [first, first + count).
struct BlockRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  bool contains(std::uint32_t block) const { return block >= first && block - first < count; }
  friend bool operator==(const BlockRange&, const BlockRange&) = default;
};

class HalvingDoubling {
 public:
  // Throws std::invalid_argument unless `participants` is a power of two (1 included).
  explicit HalvingDoubling(std::uint32_t participants);

  std::uint32_t participants() const { return participants_; }
  std::uint32_t levels() const { return levels_; }
  std::uint32_t steps() const { return 2 * levels_; }
  bool is_halving(std::uint32_t step) const { return step < levels_; }

  // The participant `g` exchanges with at `step` (< steps()).
  std::uint32_t partner(std::uint32_t g, std::uint32_t step) const;
  // The blocks `g` sends at `step`; it receives sent(partner(g, step), step).
  BlockRange sent(std::uint32_t g, std::uint32_t step) const;
  BlockRange received(std::uint32_t g, std::uint32_t step) const { return sent(partner(g, step), step); }

 private:
  std::uint32_t participants_;
  std::uint32_t levels_ = 0;
};

}  // namespace swarmlab::core::allreduce
