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
  // A block of coordinates at a time, each contribution's slice sorted into place by an odd-even
  // transposition network of element-wise min/max: no branches, every step a vector operation
  // across the block (bench: ~10x faster than a selection per coordinate).
  Eigen::VectorXd v(length);
  constexpr Eigen::Index kBlock = 1024;
  std::vector<Eigen::ArrayXf> slices(m, Eigen::ArrayXf(kBlock));
  Eigen::ArrayXf low(kBlock);
  for (Eigen::Index first = 0; first < length; first += kBlock) {
    const Eigen::Index count = std::min(kBlock, length - first);
    for (std::size_t i = 0; i < m; ++i) slices[i].head(count) = x.col(kept[i]).segment(first, count).array();
    for (std::size_t round = 0; round < m; ++round)
      for (std::size_t i = round % 2; i + 1 < m; i += 2) {
        low.head(count) = slices[i].head(count).min(slices[i + 1].head(count));
        slices[i + 1].head(count) = slices[i].head(count).max(slices[i + 1].head(count));
        slices[i].head(count) = low.head(count);
      }
    if (m % 2) v.segment(first, count) = slices[m / 2].head(count).cast<double>().matrix();
    else
      v.segment(first, count) =
          (0.5 * (slices[m / 2 - 1].head(count).cast<double>() + slices[m / 2].head(count).cast<double>())).matrix();
  }

  std::size_t clipped = n - m;
  // Offsets and their norms in float (they set the clip factor and a step that is small next to
  // v); the estimate itself accumulates in double.
  Eigen::VectorXf step(length), v_float(length);
  for (std::uint32_t it = 0; it < options.iterations; ++it) {
    step.setZero();
    v_float = v.cast<float>();
    clipped = n - m;
    for (std::size_t i = 0; i < m; ++i) {
      const double norm = std::sqrt(static_cast<double>((x.col(kept[i]) - v_float).squaredNorm()));
      double scale = 1;
      if (norm > options.tau) {
        scale = options.tau / norm;
        ++clipped;
      }
      step.noalias() += static_cast<float>(w[i] * scale / total) * (x.col(kept[i]) - v_float);
    }
    v += step.cast<double>();
  }
  Eigen::Map<Eigen::VectorXf>(out.data(), length) = v.cast<float>();
  return clipped;
}

}  // namespace swarmlab::core::averaging
