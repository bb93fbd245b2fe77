#pragma once
// One real training peer (`swarmlab peer --train`): the core's CollaborativePeer, DeDLOC or
// DiLoCo as the scenario says, training a libtorch model on Fashion-MNIST (learn/torch) over a
// LiveEnvironment, coordinated over the DHT like any collaboration (docs/dedloc.md §1, §5;
// docs/opendiloco.md §1). The host only keeps books: it logs {"event":"start"} when it starts,
// then one JSON line per global step
//   {"peer","step","time_s","round_s","completed","participants","contributed","loss","lineage",
//    "params_hash","handover","samples_computed","samples_contributed","samples_discarded",
//    "compute_s","samples_per_s","bytes_sent","bytes_received"[,"test_accuracy","test_loss",
//    "test_samples"]}
// where "loss" is the mean training loss of the samples the step took from this peer, "handover" lists the micro-batches the step took from this peer as [first, count,
// version] (stream positions and the parameter version they were computed at: enough to replay
// the step, learn/README.md), "params_hash" is FNV-1a over the parameters after the step (equal
// hashes: bit-identical parameters); one {"event":"sync",...} line when it loaded newer state; and
// a final {"event":"exit",...} line with the sample ledger (computed = contributed + discarded +
// accumulated + in_round, the last being handed to a round still running when it left) and the final test accuracy when it evaluates. "lineage" names the state the peer
// holds (core/training/state_lineage.h), in hex; the samples_* counters are this incarnation's so
// far, and a {"event":"books",...} line repeats them every second, so that the books of a
// SIGKILLed incarnation end at most a second before it died.
//
// SIGTERM asks the peer to leave after its next step (within 15 s in any case).
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "core/training/collaborative_peer.h"
#include "core/training/dht_coordinator.h"
#include "exec/live_host.h"
#include "learn/torch/torch_learner.h"

namespace swarmlab::exec {

enum class SampleOrder { Shards, Fixed };  // learn/sample_stream.h: ShardStream, FixedOrderStream
inline constexpr core::Named<SampleOrder> kSampleOrderNames[] = {{SampleOrder::Shards, "shards"},
                                                                 {SampleOrder::Fixed, "fixed"}};

struct TrainingPeerConfig {
  LiveHostConfig host;
  std::string name;
  core::training::CollaborativePeerConfig peer;
  core::training::DhtCoordinatorConfig coordination;
  learn::TorchLearnerConfig learner;
  std::string data_dir = learn::kFashionMnistDir;
  SampleOrder order = SampleOrder::Shards;
  std::uint32_t shard_size = 1000;
  std::uint32_t shuffle_buffer = 10000;
  std::uint64_t data_seed = 1;       // the collaboration's; each peer's order also depends on its id
  std::uint64_t steps = 100;         // leave once the collaboration reached this global step
  double compute_cap_sps = 0;        // > 0: compute no faster than this (exec/paced_learner.h)
  double announce_every_s = 5;       // announce the measured compute speed this often
  // The backbone's duty: test-set accuracy every `evaluate_every` steps (0: never) on the first
  // `eval_samples` test images (0: all), and on the whole test set when leaving.
  std::uint64_t evaluate_every = 0;
  std::uint32_t eval_samples = 0;
  std::string dump_dir;              // parameters after every step: <dir>/peer-<id>-step-<k>.f32
  std::string checkpoint_dir;        // the state every `checkpoint_every` steps: <dir>/step-<k>.swls
  std::uint64_t checkpoint_every = 0;
};

// Runs the peer until the collaboration reaches config.steps, or it gives up (no step for
// host.idle_timeout_s). Returns 0, or 1 when it gave up. A round that failed for it is not an
// error: the peer reloads the state the collaboration settled on (the exit line counts them).
// Throws core::InputError for a dataset that cannot be read (the CLI exits 2).
int run_training_peer(const TrainingPeerConfig& config, std::ostream& out, std::ostream& log);

}  // namespace swarmlab::exec
