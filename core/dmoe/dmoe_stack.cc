#include "core/dmoe/dmoe_stack.h"

#include <stdexcept>
#include <string>

namespace swarmlab::core::dmoe {

DmoeStack::DmoeStack(Environment& env, std::vector<DmoeLayer*> layers, TrunkModel& trunk, Seconds pause_mean_s)
    : env_(env), layers_(std::move(layers)), trunk_(trunk), pause_mean_s_(pause_mean_s) {
  if (layers_.empty()) throw std::invalid_argument("dmoe stack: no layers");
  if (!(pause_mean_s_ >= 0)) throw std::invalid_argument("dmoe stack: the pause must be >= 0");
}

void DmoeStack::forward(std::uint64_t batch, Tensor input, bool train, std::function<void(StackForward)> done) {
  if (!batches_.emplace(batch, Batch{train, {}, 0}).second)
    throw std::invalid_argument("dmoe stack: batch " + std::to_string(batch) + " is already in flight");
  forward_from(batch, 0, std::move(input), std::move(done));  // the first layer answers later
}

void DmoeStack::forward_from(std::uint64_t batch, std::uint32_t layer, Tensor h, std::function<void(StackForward)> done) {
  Batch& b = batches_.at(batch);
  if (layer == layers()) {
    StackForward out;
    out.output = std::move(h);
    out.experts_answered = b.experts_answered;
    if (!b.train) release(batch);
    done(std::move(out));
    return;
  }
  auto scores = trunk_.gate(batch, layer, h);
  auto input = std::make_shared<Tensor>(std::move(h));
  layers_[layer]->forward(std::move(scores), *input,
                          [this, alive = alive_, batch, layer, input, done = std::move(done)](LayerForward out) mutable {
    if (!*alive) return;
    if (observer_) observer_(layer, out);
    if (out.outcome != LayerForward::Outcome::Done) {
      release(batch);
      StackForward dropped;
      dropped.dropped = out.outcome == LayerForward::Outcome::NoExperts ? BatchDrop::NoExperts : BatchDrop::NoAnswer;
      done(std::move(dropped));
      return;
    }
    Batch& b = batches_.at(batch);
    b.calls.push_back(out.call);
    for (CallFailure f : out.failures) b.experts_answered += f == CallFailure::None ? 1 : 0;
    auto next = std::make_shared<Tensor>(trunk_.output(batch, layer, std::move(*input), out.output));
    after_pause(b.train, [this, batch, layer, next, done = std::move(done)]() mutable {
      forward_from(batch, layer + 1, std::move(*next), std::move(done));
    });
  });
}

void DmoeStack::backward(std::uint64_t batch, Tensor grad_output, std::function<void(StackBackward)> done) {
  const auto it = batches_.find(batch);
  if (it == batches_.end() || !it->second.train || it->second.calls.size() != layers())
    throw std::out_of_range("dmoe stack: training batch " + std::to_string(batch) + " has not reached the top");
  backward_from(batch, layers(), std::move(grad_output), std::move(done));
}

void DmoeStack::backward_from(std::uint64_t batch, std::uint32_t above, Tensor grad,
                              std::function<void(StackBackward)> done) {
  if (above == 0) {
    batches_.erase(batch);
    StackBackward out;
    out.grad_input = std::move(grad);
    done(std::move(out));
    return;
  }
  const std::uint32_t layer = above - 1;
  Batch& b = batches_.at(batch);
  const std::uint64_t call = b.calls[layer];
  b.calls.pop_back();
  auto g = std::make_shared<Tensor>(std::move(grad));
  layers_[layer]->backward(call, *g, [this, alive = alive_, batch, layer, g, done = std::move(done)](MixtureGradient mg) mutable {
    if (!*alive) return;
    if (mg.dropped) {
      release(batch);
      StackBackward dropped;
      dropped.dropped = BatchDrop::Backward;
      done(std::move(dropped));
      return;
    }
    after_pause(true, [this, batch, layer, g, mg = std::move(mg), done = std::move(done)]() mutable {
      Tensor below = trunk_.input_gradient(batch, layer, std::move(*g), mg);
      backward_from(batch, layer, std::move(below), std::move(done));
    });
  });
}

void DmoeStack::release(std::uint64_t batch) {
  const auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  for (std::size_t layer = 0; layer < it->second.calls.size(); ++layer) layers_[layer]->release(it->second.calls[layer]);
  batches_.erase(it);
}

void DmoeStack::after_pause(bool train, std::function<void()> then) {
  if (!train || pause_mean_s_ <= 0) return then();
  env_.schedule(env_.rng().exponential(pause_mean_s_), [alive = alive_, then = std::move(then)] {
    if (*alive) then();
  });
}

}  // namespace swarmlab::core::dmoe
