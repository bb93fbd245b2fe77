#include "core/dmoe/dmoe_layer.h"

#include <memory>
#include <stdexcept>

namespace swarmlab::core::dmoe {

DmoeLayer::DmoeLayer(Environment& env, dht::DhtNode& dht, ExpertClient& client, ExpertGrid grid, std::size_t k,
                     std::uint32_t input_width, std::uint32_t output_width)
    : env_(env), dht_(dht), client_(client), grid_(std::move(grid)), k_(k), input_width_(input_width), output_width_(output_width) {
  grid_.check();
  if (k_ == 0 || input_width_ == 0 || output_width_ == 0)
    throw std::invalid_argument("dmoe layer: k and the widths must be positive");
}

void DmoeLayer::forward(std::vector<std::vector<double>> scores, Tensor input, std::function<void(LayerForward)> done) {
  if (input.cols != input_width_) throw std::invalid_argument("dmoe layer: the input's width is not the layer's");
  auto batch = std::make_shared<Tensor>(std::move(input));
  beam_search(env_, dht_, grid_, std::move(scores), k_,
              [this, alive = alive_, batch, done = std::move(done)](BeamSearchResult found) mutable {
                if (!*alive) return;
                if (found.experts.empty()) {
                  LayerForward out;
                  out.outcome = LayerForward::Outcome::NoExperts;
                  out.search = std::move(found);
                  done(std::move(out));
                  return;
                }
                auto chosen = std::make_shared<std::vector<ChosenExpert>>(found.experts);
                auto search = std::make_shared<BeamSearchResult>(std::move(found));
                mixture_forward(client_, *chosen, *batch, output_width_,
                                [this, alive, batch, chosen, search, done = std::move(done)](MixtureOutput mixed) {
                                  if (!*alive) return;
                                  LayerForward out;
                                  out.search = std::move(*search);
                                  out.failures = mixed.failures;
                                  if (mixed.dropped) {
                                    out.outcome = LayerForward::Outcome::NoAnswer;
                                    done(std::move(out));
                                    return;
                                  }
                                  out.output = mixed.output;
                                  out.call = next_call_++;
                                  kept_.emplace(out.call, Kept{std::move(*chosen), std::move(mixed), std::move(*batch)});
                                  done(std::move(out));
                                });
              });
}

void DmoeLayer::backward(std::uint64_t call, const Tensor& grad_output, std::function<void(MixtureGradient)> done) {
  const auto it = kept_.find(call);
  if (it == kept_.end()) throw std::out_of_range("dmoe layer: no forward call " + std::to_string(call) + " is kept");
  auto kept = std::make_shared<Kept>(std::move(it->second));
  kept_.erase(it);
  mixture_backward(client_, kept->chosen, kept->forward, kept->input, grad_output,
                   [alive = alive_, kept, grid = grid_, done = std::move(done)](MixtureGradient g) {
                     if (!*alive) return;
                     if (!g.dropped) g.grad_gate = score_vector_gradient(grid, kept->chosen, g.grad_scores);
                     done(std::move(g));
                   });
}

}  // namespace swarmlab::core::dmoe
