#pragma once
// Reads a scenario from JSON (schema and example: scenarios/README.md) and validates it.
//
// Every problem is reported as core::InputError(source, location, problem), where location is the
// JSON path of the offending value ("peers[3].upload_bps"), "line L, column C" for JSON syntax
// errors, or a trace file's "line N"; problem says what was expected and what was found. Unknown
// fields are errors (the message lists the allowed names), so a typo is never silently ignored.
//
// The loader is one function per section (workload, peers, pair_caps, averaging, traces) and a
// table of sections in scenario_loader.cc; a new section is a new row and a new function.
#include <string>

#include "scenarios/scenario.h"

namespace swarmlab::scenarios {

// Loads the scenario file at `path`. Trace paths inside it are relative to its folder.
Scenario load_scenario(const std::string& path);

// Parses scenario JSON; `source_name` names it in errors and is the base for relative trace
// paths (its folder).
Scenario parse_scenario(const std::string& json_text, const std::string& source_name);

// Every value is checked against the documented limits of core/input_limits.h (table:
// scenarios/README.md, "Limits").

}  // namespace swarmlab::scenarios
