#include "sim/experiments/robustness_experiment.h"

#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/rng.h"
#include "sim/scenario/swarm.h"

namespace swarmlab::sim {
namespace {

// One round's honest contributions, as the books see them.
struct RoundBook {
  std::vector<double> weighted_sum;
  double weight = 0, loss_sum = 0;
  std::optional<HonestEstimate> estimate;  // the attackers', computed once per round
};

struct RobustPeerState {
  std::vector<float> params;
  std::uint64_t round = 0;        // the round it is in (its plan's id)
  std::uint64_t contributed = 0;  // the samples behind its vector in that round
  core::Rng data;                 // which samples its batches hold
};

std::vector<std::uint32_t> draw_batch(core::Rng& rng, std::uint64_t size, std::uint32_t samples) {
  std::vector<std::uint32_t> batch(size);
  for (auto& i : batch) i = static_cast<std::uint32_t>(rng.below(samples));
  return batch;
}

}  // namespace

double RobustnessResult::mean_relative_distance() const {
  if (relative_distance.empty()) return 0;
  return std::accumulate(relative_distance.begin(), relative_distance.end(), 0.0) /
         static_cast<double>(relative_distance.size());
}

RobustnessResult run_robustness(const scenarios::Scenario& scenario, const RobustnessModel& model,
                                const RobustnessSetup& setup) {
  const std::size_t n = scenario.peers.size();
  if (setup.attackers >= n)
    throw std::invalid_argument("robustness: " + std::to_string(setup.attackers) + " attackers leave no honest peer of " +
                                std::to_string(n));
  if (scenario.workload.parameters != model.initial.size())
    throw std::invalid_argument("robustness: the scenario's workload.parameters (" + std::to_string(scenario.workload.parameters) +
                                ") is not the model's " + std::to_string(model.initial.size()));
  if (model.samples == 0 || !model.gradient) throw std::invalid_argument("robustness: a model without samples or gradient");
  scenarios::Scenario sc = scenario;
  if (setup.no_clip) sc.averaging.centered_clip.reset();
  else if (setup.clip) sc.averaging.centered_clip = setup.clip;
  const std::size_t honest = n - setup.attackers;
  const auto attacks = [&](PeerId p) { return p >= honest; };

  std::vector<RobustPeerState> peers;
  for (std::size_t p = 0; p < n; ++p) peers.push_back({model.initial, 0, 0, core::Rng(sc.seed, 1000 + p)});
  core::Rng attacker_rng(sc.seed, 7);  // the attackers' own data for their estimate, and their noise
  std::map<std::uint64_t, RoundBook> books;
  RobustnessResult result;
  SimSwarm* swarm_ptr = nullptr;

  SwarmOptions options;
  options.coordination = sc.training.coordination;
  options.replay_rounds = false;  // every round carries values
  options.values = [&](PeerId p) -> std::optional<VirtualLearnerOptions::Values> {
    VirtualLearnerOptions::Values v;
    v.fill = [&, p](std::span<float> out) {
      RobustPeerState& me = peers[p];
      if (me.contributed == 0) return;  // nothing computed: an empty contribution (zeros)
      const std::vector<std::uint32_t> batch = draw_batch(me.data, me.contributed, model.samples);
      RoundBook& book = books[me.round];
      if (!attacks(p)) {
        const double loss = model.gradient(me.params, batch, out);
        const double w = static_cast<double>(me.contributed);
        if (book.weighted_sum.empty()) book.weighted_sum.assign(out.size(), 0.0);
        for (std::size_t k = 0; k < out.size(); ++k) book.weighted_sum[k] += w * out[k];
        book.weight += w;
        book.loss_sum += w * loss;
        return;
      }
      std::vector<float> own(out.size());
      model.gradient(me.params, batch, own);
      if (!book.estimate) {
        // What the attackers know of the honest gradients: as many gradients as there are honest
        // peers, computed at their own parameters on batches of their own data.
        std::vector<std::vector<float>> guesses(honest, std::vector<float>(out.size()));
        for (auto& g : guesses) model.gradient(me.params, draw_batch(attacker_rng, me.contributed, model.samples), g);
        book.estimate = estimate_honest(guesses);
      }
      craft_attack(setup.attack, own, *book.estimate, n, setup.attackers, attacker_rng, out);
    };
    v.averaged = [&, p](std::span<const float> average) {
      RobustPeerState& me = peers[p];
      for (std::size_t k = 0; k < average.size(); ++k)
        me.params[k] -= static_cast<float>(setup.learning_rate) * average[k];
      if (p != 0) return;
      const auto it = books.find(me.round);
      if (it != books.end() && it->second.weight > 0) {
        const RoundBook& book = it->second;
        double d2 = 0, m2 = 0;
        for (std::size_t k = 0; k < average.size(); ++k) {
          const double mean = book.weighted_sum[k] / book.weight;
          d2 += (average[k] - mean) * (average[k] - mean);
          m2 += mean * mean;
        }
        result.relative_distance.push_back(m2 > 0 ? std::sqrt(d2 / m2) : 0.0);
        result.train_loss.push_back(book.loss_sum / book.weight);
      }
      // Round ids are group ids, not ordered: only this round's book is done with.
      books.erase(me.round);
      if (++result.steps >= setup.steps) swarm_ptr->engine().stop();
    };
    return v;
  };

  SwarmHooks hooks;
  hooks.round_started = [&](PeerId p, const core::averaging::RoundPlan& plan, std::uint64_t contributed) {
    peers[p].round = plan.round_id;
    peers[p].contributed = contributed;
    if (attacks(p) && setup.attack == Attack::DropOut) {
      // It sends its parts, then leaves before it reduces; back a second later for the next round.
      swarm_ptr->engine().after(1e-3, [&, p] { swarm_ptr->take_down(p); });
      swarm_ptr->engine().after(1.0, [&, p] { swarm_ptr->bring_up(p); });
    }
  };
  hooks.round_finished = [&](PeerId, const core::averaging::RoundOutcome& o, std::uint64_t, std::uint64_t) {
    result.clipped += o.clipped_contributions;
  };

  SimSwarm swarm(sc, options, hooks);
  swarm_ptr = &swarm;
  swarm.start();
  swarm.engine().run_until(sc.training.duration_s);
  result.parameters = peers[0].params;
  return result;
}

}  // namespace swarmlab::sim
