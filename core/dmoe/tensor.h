#pragma once
// A batch of rows as it travels between a trainer and an expert: rows × cols fp32 values, carried
// (live mode, value tests) or virtual (the simulator's sizes-only runs: charged as bytes on the
// wire, never held).
#include <cstdint>
#include <vector>

namespace swarmlab::core::dmoe {

struct Tensor {
  std::uint32_t rows = 0, cols = 0;
  bool is_virtual = false;
  std::vector<float> values;  // rows × cols, row-major, when carried; empty when virtual

  static Tensor sized(std::uint32_t rows, std::uint32_t cols) { return Tensor{rows, cols, true, {}}; }
  static Tensor zeros(std::uint32_t rows, std::uint32_t cols) {
    return Tensor{rows, cols, false, std::vector<float>(static_cast<std::size_t>(rows) * cols, 0.0f)};
  }
  std::uint64_t elements() const { return static_cast<std::uint64_t>(rows) * cols; }
  std::uint64_t bytes() const { return 4 * elements(); }
  friend bool operator==(const Tensor&, const Tensor&) = default;
};

}  // namespace swarmlab::core::dmoe
