#include "sim/experiments/dmoe_throughput.h"

#include <chrono>
#include <memory>
#include <stdexcept>

#include "core/dmoe/expert_client.h"
#include "core/dmoe/expert_runtime.h"
#include "sim/binding/sim_world.h"
#include "sim/binding/virtual_expert_backend.h"
#include "sim/engine.h"
#include "sim/network/latency_network.h"

namespace swarmlab::sim {

using core::dmoe::ExpertUid;
using core::dmoe::Tensor;

const char* dmoe_block_name(DmoeBlock b) { return b == DmoeBlock::FeedForward ? "feed-forward" : "transformer"; }

BlockCost block_cost(DmoeBlock block) {
  BlockCost c;
  if (block == DmoeBlock::FeedForward) {
    // 1024 -> 4096 -> 4096 -> 1024, batch 2048: three matrix products, 2 FLOPs per multiply-add.
    const double batch = 2048, d = 1024, h = 4096;
    c.forward_flops = 2 * batch * (d * h + h * h + h * d);
    c.rows = 2048;
    c.width = 1024;
    c.samples_per_batch = batch;
  } else {
    // Hidden 1024, sequence 512, batch 4: Q, K, V and output projections (4h²) and a 4h
    // feed-forward (8h²) per token, plus the attention scores and their weighted sum (2·s·h each).
    const double h = 1024, s = 512, b = 4, tokens = b * s;
    c.forward_flops = 2 * tokens * (4 * h * h + 8 * h * h) + 2 * 2 * b * s * s * h;
    c.rows = static_cast<std::uint32_t>(tokens);
    c.width = 1024;
    c.samples_per_batch = b;
  }
  return c;
}

namespace {

class Chains {
 public:
  Chains(const DmoeThroughputConfig& c, std::uint32_t trainers, double mean_delay_s)
      : c_(c), cost_(block_cost(c.block)), trainers_(trainers), delay_(mean_delay_s), grid_{"blocks", 1, c.blocks} {
    if (c.blocks == 0 || c.gpus == 0 || c.blocks % c.gpus != 0)
      throw std::invalid_argument("dmoe throughput: blocks must be a positive multiple of gpus");
    if (trainers == 0) throw std::invalid_argument("dmoe throughput: need at least one trainer");
    const double forward_s = cost_.forward_flops / c.gpu_flops;
    const std::uint32_t peers = c.gpus + trainers;
    // The injected delays stand for the network: the links themselves are ideal (no latency, the
    // largest bandwidth the limits allow), so an activation's transfer costs microseconds.
    std::vector<LinkSpec> links(peers, LinkSpec{1e13, 1e13, 0});
    std::vector<SimPeerSpec> specs(peers);
    for (std::uint32_t g = 0; g < c.gpus; ++g) specs[g] = {"gpu" + std::to_string(g), cost_.rows / forward_s};
    for (std::uint32_t t = 0; t < trainers; ++t) specs[c.gpus + t] = {"trainer" + std::to_string(t), 0};
    network_ = std::make_unique<LatencyNetwork>(engine_, std::move(links));
    world_ = std::make_unique<SimWorld>(engine_, *network_, std::move(specs), c.seed);
    core::dmoe::RuntimeConfig runtime_config;
    runtime_config.max_batch_rows = cost_.rows;  // each request is a whole batch already
    for (core::PeerId g = 0; g < c.gpus; ++g) {
      backends_.push_back(std::make_unique<VirtualExpertBackend>(world_->env(g), cost_.width, cost_.width, c.backward_cost));
      runtimes_.push_back(std::make_unique<core::dmoe::ExpertRuntime>(world_->env(g), grid_, *backends_.back(), runtime_config));
      world_->env(g).set_sink(runtimes_.back().get());
    }
    // Block b lives on GPU b / (blocks / gpus), as model parallelism would partition them.
    for (std::uint32_t b = 0; b < c.blocks; ++b) runtimes_[gpu_of(b)]->host(ExpertUid{b});
    core::dmoe::ClientConfig client_config;
    client_config.forward_timeout_s = client_config.backward_timeout_s = 1e6;  // nothing fails here
    for (std::uint32_t t = 0; t < trainers; ++t) {
      core::Environment& env = world_->env(c.gpus + t);
      clients_.push_back(std::make_unique<core::dmoe::ExpertClient>(env, client_config));
      env.set_sink(clients_.back().get());
    }
  }

  double run() {
    // Trainers start at uniformly random points of their batch, as a swarm joined at different
    // times would be: started together, they would move from GPU to GPU as one convoy, an artefact
    // that takes simulated hours to dissolve.
    for (std::uint32_t t = 0; t < trainers_; ++t)
      step(t, static_cast<std::uint32_t>(world_->env(c_.gpus + t).rng().below(2 * c_.blocks)));
    engine_.run_until(c_.warmup_s + c_.measure_s);
    const double batches = static_cast<double>(passes_) / (2.0 * c_.blocks);
    return batches * cost_.samples_per_batch / c_.measure_s;
  }

 private:
  std::uint32_t gpu_of(std::uint32_t block) const { return block / (c_.blocks / c_.gpus); }

  // Pass `pass` of a batch: 0..blocks-1 forward through blocks 0..blocks-1, then backward from the
  // last block to the first.
  void step(std::uint32_t trainer, std::uint32_t pass) {
    const std::uint32_t n = c_.blocks;
    const bool forward = pass < n;
    const std::uint32_t block = forward ? pass : 2 * n - 1 - pass;
    core::dmoe::ExpertClient& client = *clients_[trainer];
    const Tensor activation = Tensor::sized(cost_.rows, cost_.width);
    auto next = [this, trainer, pass, n](core::dmoe::ExpertClient::Result r) {
      if (!r.output) throw std::logic_error("dmoe throughput: a block call failed");
      core::Environment& env = world_->env(c_.gpus + trainer);
      if (env.now() >= c_.warmup_s) ++passes_;
      const std::uint32_t following = pass + 1 == 2 * n ? 0 : pass + 1;
      const double pause = delay_ > 0 ? env.rng().exponential(delay_) : 0.0;
      env.schedule(pause, [this, trainer, following] { step(trainer, following); });
    };
    if (forward) client.forward(gpu_of(block), ExpertUid{block}, activation, cost_.width, std::move(next));
    else client.backward(gpu_of(block), ExpertUid{block}, activation, activation, cost_.width, std::move(next));
  }

  const DmoeThroughputConfig& c_;
  BlockCost cost_;
  std::uint32_t trainers_;
  double delay_;
  core::dmoe::ExpertGrid grid_;
  Engine engine_;
  std::unique_ptr<LatencyNetwork> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<std::unique_ptr<VirtualExpertBackend>> backends_;
  std::vector<std::unique_ptr<core::dmoe::ExpertRuntime>> runtimes_;
  std::vector<std::unique_ptr<core::dmoe::ExpertClient>> clients_;
  std::uint64_t passes_ = 0;
};

}  // namespace

double run_dmoe_chains(const DmoeThroughputConfig& config, std::uint32_t trainers, double mean_delay_s) {
  if (!(mean_delay_s >= 0)) throw std::invalid_argument("dmoe throughput: a mean delay must be >= 0");
  return Chains(config, trainers, mean_delay_s).run();
}

DmoeThroughputResult run_dmoe_throughput(const DmoeThroughputConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (config.mean_delays_s.empty()) throw std::invalid_argument("dmoe throughput: no delays to run");
  DmoeThroughputResult r;
  r.config = config;
  r.cost = block_cost(config.block);
  r.forward_s = r.cost.forward_flops / config.gpu_flops;
  // Pipelined model parallelism without delay, with enough micro-batches that the pipeline's fill
  // and drain vanish, keeps every GPU busy: a batch costs each GPU its blocks' forward and
  // backward passes, and the GPUs work on different micro-batches at once.
  const double gpu_seconds_per_batch = (config.blocks / config.gpus) * r.forward_s * (1 + config.backward_cost);
  r.pipelined_upper_bound = r.cost.samples_per_batch / gpu_seconds_per_batch;
  for (const double delay : config.mean_delays_s) {
    DmoeThroughputPoint p;
    p.mean_delay_s = delay;
    p.dmoe = run_dmoe_chains(config, config.trainers, delay);
    p.model_parallel = run_dmoe_chains(config, 1, delay);
    r.points.push_back(p);
  }
  r.dmoe_retained = r.points.back().dmoe / r.points.front().dmoe;
  r.model_parallel_retained = r.points.back().model_parallel / r.points.front().model_parallel;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace swarmlab::sim
