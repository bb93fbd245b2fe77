#include "core/dmoe/mixture.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace swarmlab::core::dmoe {

std::vector<std::vector<double>> score_vector_gradient(const ExpertGrid& grid, const std::vector<ChosenExpert>& chosen,
                                                       const std::vector<double>& grad_scores) {
  if (grad_scores.size() != chosen.size())
    throw std::invalid_argument("score_vector_gradient: " + std::to_string(grad_scores.size()) + " gradients for " +
                                std::to_string(chosen.size()) + " experts");
  std::vector<std::vector<double>> out(grid.dims, std::vector<double>(grid.side, 0.0));
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    if (!grid.contains(chosen[j].uid)) throw std::invalid_argument("score_vector_gradient: expert " + uid_text(chosen[j].uid) + " is outside the grid");
    for (std::uint32_t i = 0; i < grid.dims; ++i) out[i][chosen[j].uid[i]] += grad_scores[j];
  }
  return out;
}

std::vector<double> softmax(const std::vector<double>& scores) {
  std::vector<double> w(scores.size());
  if (scores.empty()) return w;
  const double top = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) sum += w[i] = std::exp(scores[i] - top);
  for (double& x : w) x /= sum;
  return w;
}

namespace {

// out += weight * t (carried tensors).
void add_scaled(Tensor& out, const Tensor& t, double weight) {
  for (std::size_t i = 0; i < out.values.size(); ++i) out.values[i] += static_cast<float>(weight * t.values[i]);
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) s += static_cast<double>(a.values[i]) * b.values[i];
  return s;
}

Tensor like(const Tensor& shape_of, std::uint32_t cols) {
  return shape_of.is_virtual ? Tensor::sized(shape_of.rows, cols) : Tensor::zeros(shape_of.rows, cols);
}

}  // namespace

void mixture_forward(ExpertClient& client, const std::vector<ChosenExpert>& chosen, const Tensor& input,
                     std::uint32_t output_width, std::function<void(MixtureOutput)> done) {
  struct State {
    std::vector<std::optional<Tensor>> answers;
    std::vector<CallFailure> failures;
    std::size_t outstanding = 0;
    std::vector<double> scores;
    std::uint32_t rows = 0, width = 0;
    bool is_virtual = false;
    std::function<void(MixtureOutput)> done;
  };
  auto s = std::make_shared<State>();
  s->answers.resize(chosen.size());
  s->failures.assign(chosen.size(), CallFailure::None);
  s->outstanding = chosen.size();
  for (const auto& c : chosen) s->scores.push_back(c.score);
  s->rows = input.rows;
  s->width = output_width;
  s->is_virtual = input.is_virtual;
  s->done = std::move(done);
  const auto combine = [](State& st) {
    MixtureOutput out;
    out.failures = st.failures;
    std::vector<double> scores;
    for (std::size_t j = 0; j < st.answers.size(); ++j)
      if (st.answers[j]) {
        out.responded.push_back(j);
        scores.push_back(st.scores[j]);
      }
    if (out.responded.empty()) {
      out.dropped = true;
      st.done(std::move(out));
      return;
    }
    out.weights = softmax(scores);
    out.output = st.is_virtual ? Tensor::sized(st.rows, st.width) : Tensor::zeros(st.rows, st.width);
    for (std::size_t i = 0; i < out.responded.size(); ++i) {
      Tensor& answer = *st.answers[out.responded[i]];
      if (!st.is_virtual) add_scaled(out.output, answer, out.weights[i]);
      out.expert_outputs.push_back(std::move(answer));
    }
    st.done(std::move(out));
  };
  if (chosen.empty()) {
    combine(*s);
    return;
  }
  for (std::size_t j = 0; j < chosen.size(); ++j)
    client.forward(chosen[j].runtime, chosen[j].uid, input, output_width, [s, j, combine](ExpertClient::Result r) {
      if (r.output) s->answers[j] = std::move(r.output);
      else s->failures[j] = r.failure;
      if (--s->outstanding == 0) combine(*s);
    });
}

void mixture_backward(ExpertClient& client, const std::vector<ChosenExpert>& chosen, const MixtureOutput& forward,
                      const Tensor& input, const Tensor& grad_output, std::function<void(MixtureGradient)> done) {
  if (forward.dropped) throw std::logic_error("mixture_backward: the forward pass was dropped");
  struct State {
    MixtureGradient result;
    std::size_t outstanding = 0;
    std::function<void(MixtureGradient)> done;
  };
  auto s = std::make_shared<State>();
  s->result.grad_input = like(input, input.cols);
  s->result.grad_scores.assign(chosen.size(), 0.0);
  s->outstanding = forward.responded.size();
  s->done = std::move(done);
  if (!grad_output.is_virtual) {
    const double gy = dot(grad_output, forward.output);
    for (std::size_t i = 0; i < forward.responded.size(); ++i)
      s->result.grad_scores[forward.responded[i]] = forward.weights[i] * (dot(grad_output, forward.expert_outputs[i]) - gy);
  }
  for (std::size_t i = 0; i < forward.responded.size(); ++i) {
    const ChosenExpert& c = chosen[forward.responded[i]];
    Tensor scaled = grad_output;
    for (float& v : scaled.values) v = static_cast<float>(v * forward.weights[i]);
    client.backward(c.runtime, c.uid, input, scaled, input.cols, [s](ExpertClient::Result r) {
      if (r.output) {
        ++s->result.answered;
        if (!r.output->is_virtual) add_scaled(s->result.grad_input, *r.output, 1.0);
      }
      if (--s->outstanding == 0) {
        s->result.dropped = s->result.answered == 0;
        s->done(std::move(s->result));
      }
    });
  }
}

}  // namespace swarmlab::core::dmoe
