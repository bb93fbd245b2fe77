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
  bool consistent = true;       // every member (and every peer that loaded it) holds the same parameters
  std::optional<double> test_accuracy, test_loss;  // when a peer evaluated at this step
};

struct TrainingPeerSummary {
  std::size_t peer = 0;
  std::size_t incarnations = 0;  // exit lines written (a SIGKILLed incarnation writes none)
  std::uint64_t step = 0;        // of the last exit line
  std::uint64_t computed = 0, contributed = 0, discarded = 0, accumulated = 0;  // over exited incarnations
  bool ledger_balanced = true;   // computed = contributed + discarded + accumulated, in every exit line
  std::uint64_t syncs = 0;       // state downloads
  std::optional<double> test_accuracy;  // the last exit line's whole-test-set accuracy
  std::uint64_t bytes_sent = 0, bytes_received = 0;
};

struct TrainingSummary {
  std::vector<TrainingStepSummary> steps;  // by step
  std::vector<TrainingPeerSummary> peers;  // by peer index
  bool consistent = true;                  // every step
  std::uint64_t last_step = 0;
  std::optional<double> final_test_accuracy;  // best whole-test-set figure of the last step's peers
  double first_step_s = 0, last_step_s = 0;
  double steps_per_hour() const;           // between the first and the last step
};

// Reads the JSON lines of each peer (one file per peer index). Lines that are not JSON objects are
// skipped (a killed peer may leave half a line).
TrainingSummary collect_training(const std::vector<std::string>& peer_line_paths);

nlohmann::ordered_json training_json(const TrainingSummary& summary);
// step,time_s,members,samples,loss,test_accuracy,test_loss,round_s,consistent
std::string training_metrics_csv(const TrainingSummary& summary);

}  // namespace swarmlab::exec
