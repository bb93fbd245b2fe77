#pragma once
// Small-sample statistics for comparisons: the mean of paired changes over seeds and its 95%
// confidence interval from Student's t distribution (few seeds per composition, so the normal
// quantile 1.96 would be far too narrow: with 3 seeds t = 4.30).
#include <cstddef>
#include <vector>

namespace swarmlab::sweep {

// P(T <= t) for Student's t with `df` degrees of freedom (df > 0).
double student_t_cdf(double t, double df);
// The q-quantile (0 < q < 1) of Student's t with `df` degrees of freedom.
double student_t_quantile(double q, double df);

struct MeanCi {
  std::size_t n = 0;
  double mean = 0;
  double low = 0, high = 0;  // NaN when n < 2
};
// Mean and two-sided `level` confidence interval of `x`'s mean.
MeanCi mean_ci(const std::vector<double>& x, double level = 0.95);

}  // namespace swarmlab::sweep
