#pragma once
// What a live training launch measured (`swarmlab launch --train`): the per-step JSON lines of
// every peer (exec/train/training_peer.h), every incarnation of it, gathered into one view.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace swarmlab::exec {

struct TrainingStepSummary {
  std::uint64_t step = 0;
  double time_s = 0;            // the last member's report of it (shared timeline)
  double round_s = 0;           // the longest member's averaging round
  std::size_t members = 0;      // peers that reported the step from a round
  std::uint64_t samples = 0;    // contributed to it, over every member
  std::optional<double> loss;   // members' training loss, weighted by their samples
  // Peers that hold the same lineage (core/training/state_lineage.h) hold the same parameters,
  // over every member and every peer that loaded the step.
  bool consistent = true;
  std::size_t lineages = 0;     // distinct states reported at this step (1 unless a round failed)
  std::optional<double> test_accuracy, test_loss;  // when a peer evaluated at this step
};

// One peer's samples over all its incarnations. An incarnation that exited says how many it had
// accumulated; one that was SIGKILLed lost whatever it computed and did not contribute or
// discard, as of its last line (what it computed after that line is unknown: lost too).
struct SampleBooks {
  std::uint64_t computed = 0, contributed = 0, discarded = 0, accumulated = 0, lost = 0;
  // computed = contributed + discarded + accumulated + lost, no incarnation's counters disagree
  // with its step lines, and no micro-batch of an incarnation went into two steps.
  bool balanced = true;
  void add(const SampleBooks& o);
};

struct TrainingPeerSummary {
  std::size_t peer = 0;
  std::size_t incarnations = 0;  // started
  std::size_t killed = 0;        // incarnations that wrote no exit line
  std::uint64_t step = 0;        // of the last exit line
  std::optional<std::string> final_hash, final_lineage;  // the last incarnation's, when it exited
  SampleBooks samples;
  std::uint64_t syncs = 0;       // state downloads (whole or updates), failed ones included
  std::uint64_t update_syncs = 0;  // of which the steps it missed arrived as updates
  std::optional<double> test_accuracy;  // the last exit line's whole-test-set accuracy
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  double measured_sps = 0;       // the compute speed it last announced (samples per device second)
};

struct TrainingSummary {
  std::vector<TrainingStepSummary> steps;  // by step
  std::vector<TrainingPeerSummary> peers;  // by peer index
  bool consistent = true;                  // every step
  std::size_t diverged_reports = 0;        // step reports whose lineage was not the step's most held
  SampleBooks samples;                     // the whole swarm's
  std::uint64_t last_step = 0;
  std::uint64_t parameters = 0;            // of the model trained (from the start lines)
  double longest_stall_s = 0;              // the longest time between consecutive global steps
  // The peers whose last incarnation exited (survivors) all hold the same parameters.
  bool survivors_identical = true;
  std::optional<double> final_test_accuracy;  // best whole-test-set figure of the last step's peers
  double first_step_s = 0, last_step_s = 0;
  double steps_per_hour() const;           // between the first and the last step
};

// Reads the JSON lines of each peer (one file per peer index; its incarnations one after another,
// each beginning with a start line). Lines that are not JSON objects are skipped (a killed peer
// may leave half a line).
TrainingSummary collect_training(const std::vector<std::string>& peer_line_paths);

nlohmann::ordered_json training_json(const TrainingSummary& summary);
// step,time_s,members,samples,loss,test_accuracy,test_loss,round_s,consistent
std::string training_metrics_csv(const TrainingSummary& summary);

}  // namespace swarmlab::exec
