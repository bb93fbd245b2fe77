#pragma once
// The communication schedule of recursive halving then recursive doubling over P participants
// (docs/hydra.md §5). Q, the largest power of two not above P, take part in the exchange proper;
// the vector is cut into Q equal blocks.
// - Halving step s (0 <= s < L = log2 Q): participant g < Q pairs with g xor Q/2^(s+1). Both hold
//   the same region of Q/2^s blocks; each keeps the half that contains its own block, sends the
//   other half and reduces what it receives into the half it kept. After L steps g holds block g,
//   reduced over everyone.
// - Doubling step L + t (0 <= t < L): g pairs with g xor 2^t, sends its region of 2^t blocks (the
//   aligned run that contains block g) and receives its partner's, doubling the region.
// When P is not a power of two, the E = P - Q extra participants are folded in first and served
// last (as Rabenseifner's reduction does): before the halving, extra Q + i sends its whole vector
// to participant i, which reduces it into its own; after the doubling, i sends the result back.
// Those two steps are one-sided, and at every other step the extras stand by.
// 2L steps in all (2L + 2 with extras); at each exchange step both sides send the same amount.
#include <cstdint>
#include <optional>

namespace swarmlab::core::allreduce {

// A run of whole blocks: [first, first + count). Empty (count 0): nothing.
struct BlockRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  bool contains(std::uint32_t block) const { return block >= first && block - first < count; }
  bool empty() const { return count == 0; }
  friend bool operator==(const BlockRange&, const BlockRange&) = default;
};

class HalvingDoubling {
 public:
  // Throws std::invalid_argument when `participants` is 0.
  explicit HalvingDoubling(std::uint32_t participants);

  std::uint32_t participants() const { return participants_; }
  std::uint32_t blocks() const { return core_; }  // Q: the vector is cut into this many blocks
  std::uint32_t extras() const { return participants_ - core_; }
  std::uint32_t levels() const { return levels_; }
  std::uint32_t steps() const { return 2 * levels_ + (extras() > 0 ? 2 : 0); }
  // Steps that merge (folding the extras in, halving): after them participant g < Q holds block g
  // reduced over everyone that reached it, and nobody reduces that block any further.
  std::uint32_t merging_steps() const { return levels_ + (extras() > 0 ? 1 : 0); }
  // What arrives at `step` is averaged into what the receiver holds (folding in an extra, halving),
  // or replaces it (doubling, serving an extra).
  bool merges(std::uint32_t step) const;

  // The participant `g` deals with at `step` (< steps()), if any: the exchange is mutual.
  std::optional<std::uint32_t> partner(std::uint32_t g, std::uint32_t step) const;
  // The blocks `g` sends at `step`; empty when it sends nothing. It receives what its partner sends.
  BlockRange sent(std::uint32_t g, std::uint32_t step) const;
  BlockRange received(std::uint32_t g, std::uint32_t step) const;

 private:
  bool folded() const { return extras() > 0; }
  // The step of the exchange proper, when `step` is one.
  std::optional<std::uint32_t> exchange_step(std::uint32_t step) const;
  void check(std::uint32_t g, std::uint32_t step) const;

  std::uint32_t participants_;
  std::uint32_t core_ = 1;
  std::uint32_t levels_ = 0;
};

}  // namespace swarmlab::core::allreduce
