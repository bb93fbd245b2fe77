#pragma once
// Runs one of analysis/'s Python scripts (matplotlib plots) without a shell: arguments are passed
// as they are, so no folder name needs quoting.
#include <string>
#include <vector>

namespace swarmlab::cli {

// Runs `analysis/<script> args...` with the interpreter that has python3-matplotlib:
// $SWARMLAB_PYTHON if set, else Debian's /usr/bin/python3 (setup.sh installs matplotlib for it; a
// python3 found first on PATH, e.g. pyenv's, usually lacks it), else python3 from PATH. Returns the
// script's exit status; 127 when no interpreter could be started, -1 when it did not exit normally.
int run_analysis_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace swarmlab::cli
