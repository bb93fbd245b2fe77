#include "learn/torch/torch_placement_policy.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <stdexcept>

namespace swarmlab::learn {

namespace {

void check(const std::vector<PlacementTask>& tasks, const PolicyTrainingConfig& c) {
  if (tasks.empty()) throw std::invalid_argument("placement policy: no task to train on");
  if (c.updates == 0 || c.samples == 0 || c.hidden == 0)
    throw std::invalid_argument("placement policy: updates, samples and hidden units must be positive");
  if (c.levels < 2) throw std::invalid_argument("placement policy: expected at least 2 share levels");
  if (!(c.learning_rate > 0) || !(c.baseline_decay >= 0 && c.baseline_decay < 1) || !(c.entropy_weight >= 0))
    throw std::invalid_argument("placement policy: expected a positive learning rate, a baseline decay in [0, 1) and "
                                "a non-negative entropy weight");
  for (const auto& t : tasks) {
    if (t.devices == 0 || t.devices != tasks.front().devices)
      throw std::invalid_argument("placement policy: every composition needs the same number of devices (" +
                                  std::to_string(tasks.front().devices) + "), " + t.name + " has " +
                                  std::to_string(t.devices));
    if (t.features.empty() || t.features.size() != tasks.front().features.size())
      throw std::invalid_argument("placement policy: " + t.name + " has " + std::to_string(t.features.size()) +
                                  " features, expected " + std::to_string(tasks.front().features.size()));
    if (!t.step_seconds || !(t.reference_s > 0))
      throw std::invalid_argument("placement policy: " + t.name + " needs a step measure and a positive reference");
  }
}

std::vector<std::uint32_t> levels_of(const torch::Tensor& row) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(row.size(0)));
  auto a = row.accessor<std::int64_t, 1>();
  for (std::size_t d = 0; d < out.size(); ++d) out[d] = static_cast<std::uint32_t>(a[static_cast<std::int64_t>(d)]);
  return out;
}

}  // namespace

PolicyTrainingResult train_placement_policy(const std::vector<PlacementTask>& tasks, const PolicyTrainingConfig& c) {
  check(tasks, c);
  at::set_num_threads(1);
  torch::manual_seed(c.seed);
  const auto k = static_cast<std::int64_t>(tasks.front().devices);
  const auto levels = static_cast<std::int64_t>(c.levels);
  const auto inputs = static_cast<std::int64_t>(tasks.front().features.size());
  const auto hidden = static_cast<std::int64_t>(c.hidden);
  torch::nn::Sequential net(torch::nn::Linear(inputs, hidden), torch::nn::Tanh(), torch::nn::Linear(hidden, hidden),
                            torch::nn::Tanh(), torch::nn::Linear(hidden, k * levels));
  {
    // Leaving a device out starts as likely as taking part (level 0 against the other levels
    // together): which devices to leave out is a joint choice that uniform levels would almost never
    // sample (two devices out of nine levels each: 1 draw in 81).
    torch::NoGradGuard no_grad;
    auto head = net->ptr<torch::nn::LinearImpl>(4);
    head->bias.view({k, levels}).select(1, 0).fill_(std::log(static_cast<double>(levels - 1)));
  }
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(c.learning_rate));

  std::vector<torch::Tensor> features;
  for (const auto& t : tasks) {
    std::vector<float> f(t.features.begin(), t.features.end());
    features.push_back(torch::tensor(f, torch::kFloat32));
  }
  const auto log_policy = [&](std::size_t task) { return torch::log_softmax(net->forward(features[task]).view({k, levels}), 1); };
  const auto greedy = [&](std::size_t task) {
    torch::NoGradGuard no_grad;
    return levels_of(log_policy(task).argmax(1));
  };

  PolicyTrainingResult result;
  for (const auto& p : net->parameters()) result.parameters += static_cast<std::size_t>(p.numel());
  std::vector<std::optional<double>> baseline(tasks.size());
  for (std::uint32_t update = 0; update < c.updates; ++update) {
    PolicyCurvePoint point;
    point.update = update + 1;
    torch::Tensor loss = torch::zeros({});
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const torch::Tensor logp = log_policy(t);                            // k x levels
      const torch::Tensor drawn = torch::multinomial(logp.exp().detach(), c.samples, /*replacement=*/true);  // k x samples
      std::vector<float> rewards(c.samples);
      double mean_step = 0;
      for (std::uint32_t s = 0; s < c.samples; ++s) {
        const double step = tasks[t].step_seconds(levels_of(drawn.select(1, s).contiguous()));
        mean_step += step / c.samples;
        rewards[s] = static_cast<float>(-step / tasks[t].reference_s);
      }
      const double mean_reward = -mean_step / tasks[t].reference_s;
      const double b = baseline[t].value_or(mean_reward);
      // Scaled by the rewards' spread in this batch: the step size then does not depend on how far
      // apart the sampled steps happen to be (a task near its optimum keeps learning).
      const torch::Tensor r = torch::tensor(rewards);
      const torch::Tensor advantage = (r - static_cast<float>(b)) / (r.std() + 1e-3f);
      const torch::Tensor sample_logp = logp.gather(1, drawn).sum(0);     // samples
      const torch::Tensor entropy = -(logp.exp() * logp).sum(1).mean();
      loss = loss - (advantage * sample_logp).mean() - c.entropy_weight * entropy;
      baseline[t] = c.baseline_decay * b + (1 - c.baseline_decay) * mean_reward;
      point.mean_step_s.push_back(mean_step);
    }
    adam.zero_grad();
    loss.backward();
    adam.step();
    for (std::size_t t = 0; t < tasks.size(); ++t) point.greedy_step_s.push_back(tasks[t].step_seconds(greedy(t)));
    result.curve.push_back(std::move(point));
    if (c.on_update) c.on_update(update + 1);
  }
  for (std::size_t t = 0; t < tasks.size(); ++t) result.greedy_levels.push_back(greedy(t));
  return result;
}

}  // namespace swarmlab::learn
