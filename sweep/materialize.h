#pragma once
// One run's scenario: the base scenario with the run's axis values applied and its seed set
// (sweep/README.md, "What each target does"). The result is written as scenario JSON and read
// back by the scenario loader, so every run is validated exactly as a hand-written scenario and
// can be reproduced with `swarmlab sweep <spec.json> --scenario-of RUN`. Churn rates are the exception:
// they become a generated churn trace on the loaded scenario.
//
// Randomness (per-peer draws, which peers are clients, churn sessions) comes from the run's seed
// and the axis's name only, never from other axes' values: two runs that differ only in a crossed
// axis (e.g. the strategy) see the same peers, which makes comparisons paired.
#include <string>

#include "scenarios/scenario.h"
#include "sweep/plan.h"
#include "sweep/spec.h"

namespace swarmlab::sweep {

struct Materialized {
  json scenario_json;            // what the loader read
  scenarios::Scenario scenario;  // loaded, with generated churn applied
};

// Throws core::InputError (from the loader) when the combination of values gives an invalid
// scenario, e.g. no public peer left.
Materialized materialize(const SweepSpec& spec, const RunDesc& run);

// A digest of everything a run's result depends on: the base scenario, the experiment, the axis
// definitions, the run's values and seed, the contents of trace files the axes name, and the
// result format. A result file is reused only while its key matches.
std::string run_key(const SweepSpec& spec, const RunDesc& run);

// 64-bit FNV-1a of `text`, as 16 hex digits.
std::string digest(std::string_view text);

}  // namespace swarmlab::sweep
