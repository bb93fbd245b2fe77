#include "core/averaging/centered_clip.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

namespace swarmlab::core::averaging {

void CenteredClip::validate() const {
  if (!(tau > 0) || !std::isfinite(tau)) throw std::invalid_argument("centered clip: tau must be a positive number");
  if (iterations < 1 || iterations > 1000) throw std::invalid_argument("centered clip: iterations must be in 1..1000");
}

std::size_t centered_clip(std::span<const float> rows, std::span<const double> weights, const CenteredClip& options,
                          std::span<float> out) {
  const std::size_t n = weights.size(), len = out.size();
  if (n == 0 || rows.size() != n * len) throw std::invalid_argument("centered clip: rows do not match weights x length");
  const auto length = static_cast<Eigen::Index>(len);
  const Eigen::Map<const Eigen::MatrixXf> x(rows.data(), length, static_cast<Eigen::Index>(n));

  // A contribution with a non-finite element is left out: it has no distance to clip.
  std::vector<Eigen::Index> kept;
  for (std::size_t i = 0; i < n; ++i)
    if (x.col(static_cast<Eigen::Index>(i)).allFinite() && weights[i] > 0) kept.push_back(static_cast<Eigen::Index>(i));
  if (kept.empty()) {
    std::fill(out.begin(), out.end(), 0.0f);
    return n;
  }
  const std::size_t m = kept.size();

  // Claimed weights above the median claim count as the median.
  std::vector<double> w;
  for (Eigen::Index i : kept) w.push_back(weights[static_cast<std::size_t>(i)]);
  std::vector<double> sorted = w;
  std::sort(sorted.begin(), sorted.end());
  const double cap = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  double total = 0;
  for (double& wi : w) total += (wi = std::min(wi, cap));

  // The start: the coordinate-wise median, which a minority cannot move outside the honest range.
  // Gathered a block of coordinates at a time, so that each contribution is read in order.
  Eigen::VectorXd v(length);
  constexpr Eigen::Index kBlock = 512;
  std::vector<float> block(static_cast<std::size_t>(kBlock) * m);
  for (Eigen::Index first = 0; first < length; first += kBlock) {
    const Eigen::Index count = std::min(kBlock, length - first);
    for (std::size_t i = 0; i < m; ++i) {
      const float* column = x.col(kept[i]).data() + first;
      for (Eigen::Index k = 0; k < count; ++k) block[static_cast<std::size_t>(k) * m + i] = column[k];
    }
    for (Eigen::Index k = 0; k < count; ++k) {
      float* values = block.data() + static_cast<std::size_t>(k) * m;
      std::nth_element(values, values + m / 2, values + m);
      double median = values[m / 2];
      if (m % 2 == 0) median = 0.5 * (median + *std::max_element(values, values + m / 2));
      v[first + k] = median;
    }
  }

  std::size_t clipped = n - m;
  Eigen::VectorXd step(length);
  Eigen::VectorXf v_float(length);
  for (std::uint32_t it = 0; it < options.iterations; ++it) {
    step.setZero();
    v_float = v.cast<float>();  // distances in float (they only set the clip factor), steps in double
    clipped = n - m;
    for (std::size_t i = 0; i < m; ++i) {
      const double norm = std::sqrt((x.col(kept[i]) - v_float).cast<double>().squaredNorm());
      double scale = 1;
      if (norm > options.tau) {
        scale = options.tau / norm;
        ++clipped;
      }
      step.noalias() += (w[i] * scale / total) * (x.col(kept[i]).cast<double>() - v);
    }
    v += step;
  }
  Eigen::Map<Eigen::VectorXf>(out.data(), length) = v.cast<float>();
  return clipped;
}

}  // namespace swarmlab::core::averaging
