#pragma once
// Helpers for the sweep tests: run the built executable (or any shell command), read outputs.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/run_cli.h"

namespace swarmlab::sweep::testing {

inline const std::string kSource = SWARMLAB_SOURCE_DIR;
inline const std::string kSwarmlab = std::string(SWARMLAB_BINARY_DIR) + "/swarmlab";

using Command = cli::testing::CliResult;  // exit_code, and stdout and stderr together in out

inline Command shell(const std::string& cmd) { return cli::testing::run_command(cmd + " 2>&1"); }

inline Command swarmlab(const std::string& args) { return shell(kSwarmlab + " " + args); }

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh, empty folder for one test's outputs.
inline std::string fresh_dir(const std::string& name) {
  const auto d = std::filesystem::path(::testing::TempDir()) / ("swarmlab_sweep_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// The CSV text without its last column (wall_s): what is deterministic in a table with wall times.
// Fine for tables whose cells hold no commas (the test sweeps' do not).
inline std::string without_last_column(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

inline std::size_t count_lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace swarmlab::sweep::testing
