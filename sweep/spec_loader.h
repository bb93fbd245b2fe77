#pragma once
// Reads a sweep spec from JSON (schema and example: sweep/README.md) and validates it, with the
// scenario loader's error quality: every problem is a core::InputError naming the file, the JSON
// path ("axes[2].range[1]") and what was expected; the CLI turns it into exit code 2. The base
// scenario is loaded and validated too (its own errors name its own file), and every axis is
// checked against it: named groups exist, values have the target's type and range, and a "field"
// axis's values give valid scenarios.
#include <string>

#include "sweep/spec.h"

namespace swarmlab::sweep {

SweepSpec load_sweep_spec(const std::string& path);
// `source_name` names the spec in errors; a base given as a path is relative to its folder.
SweepSpec parse_sweep_spec(const std::string& json_text, const std::string& source_name);

}  // namespace swarmlab::sweep
