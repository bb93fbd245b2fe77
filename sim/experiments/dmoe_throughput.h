#pragma once
// Learning@home's throughput experiment (docs/learning-at-home.md §6, §8): 224 blocks spread over
// 4 GPUs, an exponentially distributed delay after each block, trainers sending every batch
// through all blocks forward and back. The GPUs are the core's expert runtimes
// (core/dmoe/expert_runtime.h) with sizes-only experts, one expert per block; the trainers call
// them through the core's expert client. Three ways to train are compared:
// - DMoE: `trainers` asynchronous trainers, each with one batch in flight;
// - model-parallel: one batch at a time through the same blocks, with the same delays;
// - pipelined model-parallel without delay (the upper bound): every GPU always busy, computed.
// Throughput counts block passes: a batch is 2 · blocks of them (forward and backward), so a
// batch half done counts half, which keeps slow methods' figures smooth over a finite window.
#include <cstdint>
#include <string>
#include <vector>

#include "core/env.h"

namespace swarmlab::sim {

enum class DmoeBlock { FeedForward, Transformer };
const char* dmoe_block_name(DmoeBlock b);

// What one block costs, derived from its shape (docs/learning-at-home.md §8).
struct BlockCost {
  double forward_flops = 0;     // one batch, forward
  std::uint32_t rows = 0;       // rows of a batch's activation (samples, or tokens)
  std::uint32_t width = 0;      // hidden size: each row is this many fp32 values
  double samples_per_batch = 0; // samples (FFN) or sequences (Transformer)
};
BlockCost block_cost(DmoeBlock block);

struct DmoeThroughputConfig {
  DmoeBlock block = DmoeBlock::FeedForward;
  std::uint32_t blocks = 224;
  std::uint32_t gpus = 4;
  std::uint32_t trainers = 64;
  double gpu_flops = 10e12;        // sustained FLOP/s of one GPU (an assumption, stated in the docs)
  double backward_cost = 3.0;      // a backward pass, with the forward recomputed, in forward passes
  std::vector<double> mean_delays_s = {0, 0.05, 0.1, 0.15, 0.2};
  core::Seconds warmup_s = 300;    // simulated, not measured
  core::Seconds measure_s = 1800;  // simulated, measured
  std::uint64_t seed = 1;
};

struct DmoeThroughputPoint {
  double mean_delay_s = 0;
  double dmoe = 0, model_parallel = 0;  // samples per second
};

struct DmoeThroughputResult {
  DmoeThroughputConfig config;
  BlockCost cost;
  double forward_s = 0;               // one block, one batch, forward
  double pipelined_upper_bound = 0;   // samples per second with every GPU always busy
  std::vector<DmoeThroughputPoint> points;
  // throughput at the largest delay / throughput at the smallest (0)
  double dmoe_retained = 0, model_parallel_retained = 0;
  double wall_s = 0;
};

// One method at one delay: `trainers` chains, samples per second over the measured window.
double run_dmoe_chains(const DmoeThroughputConfig& config, std::uint32_t trainers, double mean_delay_s);

DmoeThroughputResult run_dmoe_throughput(const DmoeThroughputConfig& config);

}  // namespace swarmlab::sim
