#pragma once
// A small real model without libtorch: multinomial logistic (softmax) regression on Fashion-MNIST
// images, 784 x 10 weights and 10 biases (7,850 parameters), cross-entropy loss. The robustness
// experiment trains it with simulated peers (docs/trust.md §3): its gradients are the real values
// that honest peers average and attackers corrupt.
//
// Parameters, flattened: the weights row-major (class-major: 784 per class), then the biases.
#include <cstdint>
#include <span>
#include <vector>

#include "learn/fashion_mnist.h"

namespace swarmlab::learn {

class SoftmaxRegression {
 public:
  // `data` must outlive the model; its images are normalised once here.
  explicit SoftmaxRegression(const LabelledImages& data);

  std::size_t parameter_count() const { return (inputs_ + 1) * classes_; }
  std::size_t sample_count() const { return labels_.size(); }

  // Mean cross-entropy gradient over the samples `indices` at `params`, into `gradient`; returns
  // their mean loss. No samples: a zero gradient and loss 0.
  double gradient(std::span<const float> params, std::span<const std::uint32_t> indices, std::span<float> gradient) const;

  struct Evaluation {
    double loss = 0, accuracy = 0;
  };
  // Mean loss and accuracy over every sample.
  Evaluation evaluate(std::span<const float> params) const;

 private:
  std::size_t inputs_, classes_;
  std::vector<float> images_;  // samples x inputs, normalised
  std::vector<std::uint8_t> labels_;
};

}  // namespace swarmlab::learn
