#include "sweep/stats.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace swarmlab::sweep {

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated by the
// modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    // Even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    f *= c * d;
    // Odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) < kEps) break;
  }
  return f;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;  // symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
}

}  // namespace

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("student_t_cdf: df must be positive");
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double q, double df) {
  if (!(q > 0 && q < 1)) throw std::invalid_argument("student_t_quantile: q must be in (0, 1)");
  if (q < 0.5) return -student_t_quantile(1 - q, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < q) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MeanCi mean_ci(const std::vector<double>& x, double level) {
  MeanCi r;
  r.n = x.size();
  r.low = r.high = std::numeric_limits<double>::quiet_NaN();
  if (x.empty()) {
    r.mean = r.low;
    return r;
  }
  double sum = 0;
  for (double v : x) sum += v;
  r.mean = sum / static_cast<double>(r.n);
  if (r.n < 2) return r;
  double ss = 0;
  for (double v : x) ss += (v - r.mean) * (v - r.mean);
  const double se = std::sqrt(ss / static_cast<double>(r.n - 1) / static_cast<double>(r.n));
  const double t = student_t_quantile(0.5 + level / 2, static_cast<double>(r.n - 1));
  r.low = r.mean - t * se;
  r.high = r.mean + t * se;
  return r;
}

}  // namespace swarmlab::sweep
