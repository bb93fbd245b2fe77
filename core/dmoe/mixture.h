#pragma once
// One DMoE layer's call to its chosen experts (docs/learning-at-home.md §4).
//
// Forward: the input goes to every chosen expert at once; when each has answered or failed, the
// output is the average of the answers weighted by the softmax of the responders' gate scores
// (renormalised over those that answered). When none answered the batch is dropped.
// Backward: each responder gets the output gradient scaled by its weight, updates itself and
// returns its input gradient; the layer's input gradient is their sum. The gate's gradient,
// dL/ds_j = w_j (<g, E_j(x)> - <g, y>), is computed here from the kept outputs.
//
// Selection is per batch: every row of a batch goes to the same k experts with the same weights
// (docs/learning-at-home.md §7 says why).
#include <cstdint>
#include <functional>
#include <vector>

#include "core/dmoe/expert_client.h"

namespace swarmlab::core::dmoe {

struct ChosenExpert {
  ExpertUid uid;
  PeerId runtime = 0;
  double score = 0;  // additive gate score (beam_search.h)
};

struct MixtureOutput {
  bool dropped = false;                  // no expert answered
  Tensor output;                         // Σ_j w_j E_j(x) over the responders
  std::vector<std::size_t> responded;    // indexes into the chosen experts
  std::vector<double> weights;           // softmax of the responders' scores, in `responded` order
  std::vector<Tensor> expert_outputs;    // each responder's answer, in `responded` order
  std::vector<CallFailure> failures;     // per chosen expert (None when it answered)
};

struct MixtureGradient {
  bool dropped = false;                  // no responder answered the backward call
  Tensor grad_input;                     // Σ over the answers
  std::vector<double> grad_scores;       // dL/ds_j per chosen expert (0 for non-responders)
  // dL/dg_i[c] for the gate's dims × side score vectors (score_vector_gradient); filled in by
  // DmoeLayer::backward, empty from mixture_backward alone.
  std::vector<std::vector<double>> grad_gate;
  std::size_t answered = 0;
};

// The gradient with respect to the gate's score vectors g_0..g_{d-1} (dims × side), from
// dL/ds_j of the chosen experts. Gating is additive, s_j = Σ_i g_i[u_i(j)], so entry [i][c]
// collects the gradients of the chosen experts whose coordinate i is c. std::invalid_argument
// when the sizes disagree or a uid is outside the grid.
std::vector<std::vector<double>> score_vector_gradient(const ExpertGrid& grid, const std::vector<ChosenExpert>& chosen,
                                                       const std::vector<double>& grad_scores);

// Softmax of `scores` (stable for large ones).
std::vector<double> softmax(const std::vector<double>& scores);

void mixture_forward(ExpertClient& client, const std::vector<ChosenExpert>& chosen, const Tensor& input,
                     std::uint32_t output_width, std::function<void(MixtureOutput)> done);

void mixture_backward(ExpertClient& client, const std::vector<ChosenExpert>& chosen, const MixtureOutput& forward,
                      const Tensor& input, const Tensor& grad_output, std::function<void(MixtureGradient)> done);

}  // namespace swarmlab::core::dmoe
