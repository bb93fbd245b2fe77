#pragma once
// A small real expert backend for the core's tests (core/dmoe/expert_backend.h): every expert is
// y = x·W, W input_width × output_width, initialised deterministically from its uid. Forward
// charges `rows` samples of the peer's compute, backward 3·rows (recompute + backward), and the
// result is computed when the compute finishes, from the expert as it is then. Backward returns
// g·Wᵀ with the W of before the update, then applies one SGD step W -= lr · xᵀ·g.
//
// Sums are accumulated in double (products of floats are exact there) and rounded to float once,
// so tests can compute the expected values exactly (expected_forward / expected_backward).
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dmoe/expert_backend.h"
#include "core/env.h"
#include "core/rng.h"

namespace swarmlab::core::testing {

class LinearExpertBackend final : public dmoe::ExpertBackend {
 public:
  LinearExpertBackend(Environment& env, std::uint32_t input_width, std::uint32_t output_width, float lr = 0.1f)
      : env_(env), in_(input_width), out_(output_width), lr_(lr) {}

  // W of a fresh expert: uniform in [-0.5, 0.5), from a core::Rng seeded with the uid.
  static std::vector<float> initial_weights(const dmoe::ExpertUid& uid, std::uint32_t in, std::uint32_t out) {
    std::uint64_t seed = 0x5eed;
    for (const std::uint32_t c : uid) seed = seed * 1000003u + c + 1;
    Rng rng(seed, uid.size());
    std::vector<float> w(static_cast<std::size_t>(in) * out);
    for (float& v : w) v = static_cast<float>(rng.uniform() - 0.5);
    return w;
  }

  // x·W for carried x (rows × in) and W (in × out).
  static dmoe::Tensor matmul(const dmoe::Tensor& x, const std::vector<float>& w, std::uint32_t out) {
    dmoe::Tensor y = dmoe::Tensor::zeros(x.rows, out);
    for (std::uint32_t r = 0; r < x.rows; ++r)
      for (std::uint32_t o = 0; o < out; ++o) {
        double s = 0;
        for (std::uint32_t i = 0; i < x.cols; ++i)
          s += static_cast<double>(x.values[std::size_t{r} * x.cols + i]) * w[std::size_t{i} * out + o];
        y.values[std::size_t{r} * out + o] = static_cast<float>(s);
      }
    return y;
  }
  // g·Wᵀ for g (rows × out) and W (in × out).
  static dmoe::Tensor matmul_transposed(const dmoe::Tensor& g, const std::vector<float>& w, std::uint32_t in) {
    const std::uint32_t out = g.cols;
    dmoe::Tensor y = dmoe::Tensor::zeros(g.rows, in);
    for (std::uint32_t r = 0; r < g.rows; ++r)
      for (std::uint32_t i = 0; i < in; ++i) {
        double s = 0;
        for (std::uint32_t o = 0; o < out; ++o)
          s += static_cast<double>(g.values[std::size_t{r} * out + o]) * w[std::size_t{i} * out + o];
        y.values[std::size_t{r} * in + i] = static_cast<float>(s);
      }
    return y;
  }
  // W after one SGD step from input x and output gradient g: W - lr · xᵀ·g.
  static std::vector<float> sgd_step(std::vector<float> w, const dmoe::Tensor& x, const dmoe::Tensor& g, float lr) {
    const std::uint32_t in = x.cols, out = g.cols;
    for (std::uint32_t i = 0; i < in; ++i)
      for (std::uint32_t o = 0; o < out; ++o) {
        double s = 0;
        for (std::uint32_t r = 0; r < x.rows; ++r)
          s += static_cast<double>(x.values[std::size_t{r} * in + i]) * g.values[std::size_t{r} * out + o];
        float& v = w[std::size_t{i} * out + o];
        v = static_cast<float>(static_cast<double>(v) - static_cast<double>(lr) * s);
      }
    return w;
  }

  std::uint32_t input_width() const override { return in_; }
  std::uint32_t output_width() const override { return out_; }
  bool has_values() const override { return true; }

  void create(const dmoe::ExpertUid& uid) override {
    experts_[uid] = std::make_shared<Expert>(Expert{initial_weights(uid, in_, out_)});
  }
  void load(const dmoe::ExpertUid& uid, std::span<const std::uint8_t> checkpoint) override {
    const std::size_t n = std::size_t{in_} * out_;
    if (checkpoint.size() != n * sizeof(float))
      throw dmoe::CheckpointError("linear expert: a checkpoint of " + std::to_string(checkpoint.size()) +
                                  " bytes, expected " + std::to_string(n * sizeof(float)));
    std::vector<float> w(n);
    if (n) std::memcpy(w.data(), checkpoint.data(), checkpoint.size());
    experts_[uid] = std::make_shared<Expert>(Expert{std::move(w)});
  }
  void remove(const dmoe::ExpertUid& uid) override { experts_.erase(uid); }
  std::vector<std::uint8_t> checkpoint(const dmoe::ExpertUid& uid) const override {
    const std::vector<float>& w = expert(uid).w;
    std::vector<std::uint8_t> out(w.size() * sizeof(float));
    if (!w.empty()) std::memcpy(out.data(), w.data(), out.size());
    return out;
  }

  // An expert removed while its batch computes finishes that batch with the weights it had.
  void forward(const dmoe::ExpertUid& uid, const dmoe::Tensor& input, std::function<void(dmoe::Tensor)> done) override {
    auto e = find(uid);
    ++forward_batches_;
    env_.compute(input.rows, [e, input, out = out_, done = std::move(done)] { done(matmul(input, e->w, out)); });
  }
  void backward(const dmoe::ExpertUid& uid, const dmoe::Tensor& input, const dmoe::Tensor& grad_output,
                std::function<void(dmoe::Tensor)> done) override {
    auto e = find(uid);
    ++backward_batches_;
    env_.compute(3 * std::uint64_t{input.rows}, [e, input, grad_output, in = in_, lr = lr_, done = std::move(done)] {
      dmoe::Tensor grad_input = matmul_transposed(grad_output, e->w, in);
      e->w = sgd_step(std::move(e->w), input, grad_output, lr);
      done(std::move(grad_input));
    });
  }

  bool holds(const dmoe::ExpertUid& uid) const { return experts_.contains(uid); }
  const std::vector<float>& weights(const dmoe::ExpertUid& uid) const { return expert(uid).w; }
  float lr() const { return lr_; }
  std::uint64_t forward_batches() const { return forward_batches_; }
  std::uint64_t backward_batches() const { return backward_batches_; }

 private:
  struct Expert {
    std::vector<float> w;
  };
  std::shared_ptr<Expert> find(const dmoe::ExpertUid& uid) const {
    const auto it = experts_.find(uid);
    if (it == experts_.end()) throw std::out_of_range("linear expert: no expert " + dmoe::uid_text(uid));
    return it->second;
  }
  const Expert& expert(const dmoe::ExpertUid& uid) const { return *find(uid); }

  Environment& env_;
  std::uint32_t in_, out_;
  float lr_;
  std::map<dmoe::ExpertUid, std::shared_ptr<Expert>> experts_;
  std::uint64_t forward_batches_ = 0, backward_batches_ = 0;
};

}  // namespace swarmlab::core::testing
