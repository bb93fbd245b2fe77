#include "learn/softmax_regression.h"

#include <cmath>
#include <stdexcept>

#include <Eigen/Core>

namespace swarmlab::learn {
namespace {
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using MatrixMap = Eigen::Map<Matrix>;

// Row-wise log-softmax of logits (samples x classes), in place; stable against overflow.
void log_softmax(Matrix& z) {
  for (Eigen::Index r = 0; r < z.rows(); ++r) {
    const float top = z.row(r).maxCoeff();
    const float log_sum = top + std::log((z.row(r).array() - top).exp().sum());
    z.row(r).array() -= log_sum;
  }
}
}  // namespace

SoftmaxRegression::SoftmaxRegression(const LabelledImages& data)
    : inputs_(data.image_size()), classes_(kFashionMnistClasses), labels_(data.labels) {
  if (data.count == 0 || inputs_ == 0) throw std::invalid_argument("softmax regression: no samples");
  images_.resize(data.pixels.size());
  for (std::size_t i = 0; i < images_.size(); ++i) images_[i] = normalised_pixel(data.pixels[i]);
}

double SoftmaxRegression::gradient(std::span<const float> params, std::span<const std::uint32_t> indices,
                                   std::span<float> gradient) const {
  if (params.size() != parameter_count() || gradient.size() != parameter_count())
    throw std::invalid_argument("softmax regression: parameter vector of the wrong length");
  const auto n = static_cast<Eigen::Index>(indices.size());
  const auto in = static_cast<Eigen::Index>(inputs_), out = static_cast<Eigen::Index>(classes_);
  MatrixMap grad_w(gradient.data(), out, in);
  Eigen::Map<Eigen::VectorXf> grad_b(gradient.data() + out * in, out);
  grad_w.setZero();
  grad_b.setZero();
  if (n == 0) return 0;
  Matrix x(n, in);
  for (Eigen::Index i = 0; i < n; ++i) {
    const std::uint32_t s = indices[static_cast<std::size_t>(i)];
    if (s >= labels_.size()) throw std::out_of_range("softmax regression: sample index out of range");
    x.row(i) = Eigen::Map<const Eigen::RowVectorXf>(images_.data() + static_cast<std::size_t>(s) * inputs_, in);
  }
  const ConstMatrixMap w(params.data(), out, in);
  const Eigen::Map<const Eigen::RowVectorXf> b(params.data() + out * in, out);
  Matrix z = (x * w.transpose()).rowwise() + b;
  log_softmax(z);
  double loss = 0;
  Matrix delta = z.array().exp();  // softmax probabilities
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto y = static_cast<Eigen::Index>(labels_[indices[static_cast<std::size_t>(i)]]);
    loss -= z(i, y);
    delta(i, y) -= 1.0f;
  }
  const float inv = 1.0f / static_cast<float>(n);
  grad_w = (delta.transpose() * x) * inv;
  grad_b = delta.colwise().sum().transpose() * inv;
  return loss / static_cast<double>(n);
}

SoftmaxRegression::Evaluation SoftmaxRegression::evaluate(std::span<const float> params) const {
  if (params.size() != parameter_count()) throw std::invalid_argument("softmax regression: parameter vector of the wrong length");
  const auto in = static_cast<Eigen::Index>(inputs_), out = static_cast<Eigen::Index>(classes_);
  const ConstMatrixMap w(params.data(), out, in);
  const Eigen::Map<const Eigen::RowVectorXf> b(params.data() + out * in, out);
  const auto n = static_cast<Eigen::Index>(labels_.size());
  const ConstMatrixMap x(images_.data(), n, in);
  Evaluation e;
  constexpr Eigen::Index kChunk = 2048;  // bounded scratch
  for (Eigen::Index first = 0; first < n; first += kChunk) {
    const Eigen::Index rows = std::min(kChunk, n - first);
    Matrix z = (x.middleRows(first, rows) * w.transpose()).rowwise() + b;
    log_softmax(z);
    for (Eigen::Index i = 0; i < rows; ++i) {
      const auto y = static_cast<Eigen::Index>(labels_[static_cast<std::size_t>(first + i)]);
      Eigen::Index best = 0;
      z.row(i).maxCoeff(&best);
      e.loss -= z(i, y);
      e.accuracy += best == y ? 1 : 0;
    }
  }
  e.loss /= static_cast<double>(n);
  e.accuracy /= static_cast<double>(n);
  return e;
}

}  // namespace swarmlab::learn
