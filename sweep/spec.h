#pragma once
// A sweep: a base scenario, the axes that vary it, how points are sampled, the seeds every point
// runs with, and the experiment each run is (schema: sweep/README.md). Read by
// sweep/spec_loader.h, which validates every field against the base scenario, so a SweepSpec that
// exists names only groups the base has and holds only values its axes accept.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/names.h"

namespace swarmlab::sweep {

using json = nlohmann::json;

// What an axis changes. Group targets change the peer entries it names (all entries when it names
// none); the others change the whole scenario or the experiment.
enum class Target {
  Count,          // peers in the entry (0 removes it)
  ComputeSps,     // samples/s
  BandwidthBps,   // symmetric access link, bits/s
  UploadBps,      // bits/s
  DownloadBps,    // bits/s
  LatencyMs,      // one-way access latency, milliseconds
  ClientShare,    // share of the named entries' peers behind NAT, in [0, 1]
  FailureRate,    // per-round failure probability, in [0, 1]
  ChurnPerHour,   // departures per peer and hour up (exponential sessions)
  ChurnTrace,     // a churn trace file, or "none"
  Strategy,       // ar | ps | ours
  GroupSize,      // Moshpit group size, or "none" (one group)
  Codec,          // wire precision
  Coordination,   // oracle | dht
  Dpu,            // delayed parameter updates (training)
  Field,          // any scenario field, by JSON pointer
};
inline constexpr core::Named<Target> kTargetNames[] = {
    {Target::Count, "count"},
    {Target::ComputeSps, "compute_sps"},
    {Target::BandwidthBps, "bandwidth_bps"},
    {Target::UploadBps, "upload_bps"},
    {Target::DownloadBps, "download_bps"},
    {Target::LatencyMs, "latency_ms"},
    {Target::ClientShare, "client_share"},
    {Target::FailureRate, "failure_rate"},
    {Target::ChurnPerHour, "churn_per_hour"},
    {Target::ChurnTrace, "churn_trace"},
    {Target::Strategy, "strategy"},
    {Target::GroupSize, "group_size"},
    {Target::Codec, "codec"},
    {Target::Coordination, "coordination"},
    {Target::Dpu, "dpu"},
    {Target::Field, "field"},
};

bool is_group_target(Target t);

// Per-peer spread around an axis value: every peer of the entry draws its own value with the run's
// seed. Lognormal: the value is the median and `param` is sigma of the log. Uniform: the value is
// the centre and `param` the relative half-width, value * (1 ± param).
enum class Distribution { Lognormal, Uniform };
inline constexpr core::Named<Distribution> kDistributionNames[] = {{Distribution::Lognormal, "lognormal"},
                                                                   {Distribution::Uniform, "uniform"}};
struct PerPeer {
  Distribution distribution = Distribution::Lognormal;
  double param = 0;
};

struct Axis {
  std::string name;                 // its column in the table
  Target target = Target::Field;
  std::vector<std::string> groups;  // group targets: entry names; empty = every entry
  std::string pointer;              // Field: a JSON pointer into the scenario ("/averaging/part_bytes")
  // The domain: a list of values, or a numeric range [lo, hi] (uniform, or log-uniform).
  std::vector<json> values;         // normalised: bits/s, ms, names, booleans, null for "none"
  std::optional<double> lo, hi;
  bool log_scale = false;
  std::optional<std::uint64_t> steps;  // grid levels of a range (else sampling.count)
  bool integer = false;                // count, group_size: ranges give integers
  bool crossed = false;                // run every sampled point at every value
  std::optional<PerPeer> per_peer;
  double mean_down_s = 1800;           // ChurnPerHour: mean time down before coming back
  std::vector<std::string> trace_paths;  // ChurnTrace: each value's file, resolved ("" for none)
  std::string path;                    // "axes[3]": where it is defined, for messages
};

enum class Method { Grid, Random, LatinHypercube };
inline constexpr core::Named<Method> kMethodNames[] = {
    {Method::Grid, "grid"}, {Method::Random, "random"}, {Method::LatinHypercube, "latin_hypercube"}};

struct Sampling {
  Method method = Method::Grid;
  std::optional<std::uint64_t> count;  // random / LHS: points; grid: levels of ranges without steps
  std::uint64_t seed = 1;
};

enum class Experiment { Averaging, Training };
inline constexpr core::Named<Experiment> kExperimentNames[] = {{Experiment::Averaging, "averaging"},
                                                               {Experiment::Training, "training"}};

struct ExperimentSpec {
  Experiment run = Experiment::Averaging;
  std::string backend = "flow";
  std::optional<std::uint32_t> rounds;   // averaging: overrides averaging.rounds
  std::optional<double> duration_s;      // training: overrides training.duration_s
  bool replay_rounds = true;             // sim/binding/round_replay.h
};

struct SweepSpec {
  std::string name, description;
  std::string source;        // the spec file (or name) it was read from
  json base;                 // the base scenario's JSON, validated
  std::string base_source;   // its file (relative paths in it start at its folder)
  ExperimentSpec experiment;
  Sampling sampling;
  std::vector<std::uint64_t> seeds;
  std::vector<Axis> axes;    // in file order: the table's column order
};

// Upper bound on runs in one sweep (the plan lives in memory).
inline constexpr std::uint64_t kMaxRuns = 1'000'000;

}  // namespace swarmlab::sweep
