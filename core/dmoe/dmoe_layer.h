#pragma once
// One DMoE layer on a trainer (docs/learning-at-home.md §4): a forward call chooses the layer's
// experts for the batch by beam search over the DHT (beam_search.h) and sends them the batch
// (mixture.h); the backward call for that batch goes back to the experts that answered. The layer
// keeps, per forward call whose backward has not come yet, what the backward needs. This is the
// one composition of search and mixture: the simulator's trainers and live trainers both use it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "core/dht/node.h"
#include "core/dmoe/beam_search.h"
#include "core/dmoe/expert_client.h"
#include "core/dmoe/mixture.h"
#include "core/env.h"

namespace swarmlab::core::dmoe {

struct LayerForward {
  enum class Outcome { Done, NoExperts, NoAnswer };
  Outcome outcome = Outcome::Done;  // NoExperts, NoAnswer: the batch is dropped here
  Tensor output;                     // with Done
  std::uint64_t call = 0;            // with Done: names this call for backward()
  BeamSearchResult search;           // the experts chosen, the lookups and their time
  std::vector<CallFailure> failures; // per chosen expert
};

class DmoeLayer {
 public:
  // std::invalid_argument for a bad grid, k = 0 or a zero width.
  DmoeLayer(Environment& env, dht::DhtNode& dht, ExpertClient& client, ExpertGrid grid, std::size_t k,
            std::uint32_t input_width, std::uint32_t output_width);
  ~DmoeLayer() { *alive_ = false; }
  DmoeLayer(const DmoeLayer&) = delete;
  DmoeLayer& operator=(const DmoeLayer&) = delete;

  // `scores`: the gate's d score vectors of length M for this batch. `done` runs later, never
  // inside the call. std::invalid_argument for an input of the wrong width.
  void forward(std::vector<std::vector<double>> scores, Tensor input, std::function<void(LayerForward)> done);
  // The backward pass of forward call `call` (std::out_of_range when it is not kept); releases it.
  void backward(std::uint64_t call, const Tensor& grad_output, std::function<void(MixtureGradient)> done);
  // Forgets a forward call whose backward will not come (the batch was dropped in a later layer).
  void release(std::uint64_t call) { kept_.erase(call); }
  std::size_t kept() const { return kept_.size(); }
  const ExpertGrid& grid() const { return grid_; }

 private:
  struct Kept {
    std::vector<ChosenExpert> chosen;
    MixtureOutput forward;
    Tensor input;
  };
  Environment& env_;
  dht::DhtNode& dht_;
  ExpertClient& client_;
  ExpertGrid grid_;
  std::size_t k_;
  std::uint32_t input_width_, output_width_;
  std::map<std::uint64_t, Kept> kept_;
  std::uint64_t next_call_ = 1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::dmoe
