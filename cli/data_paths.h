#pragma once
// Finds the shipped data (scenarios/, traces/) whether swarmlab runs from the source tree, from
// the build folder, or elsewhere: the current folder first, then the folder above the executable,
// then the source tree the executable was built from.
#include <string>

namespace swarmlab::cli {

// Returns an existing folder for `relative` (e.g. "scenarios/table1"); throws std::invalid_argument
// naming the places it looked.
std::string find_data_dir(const std::string& relative);

}  // namespace swarmlab::cli
