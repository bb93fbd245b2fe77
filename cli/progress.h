#pragma once
// A one-line progress bar on stderr for long runs. Silent when stderr is not a terminal or when
// the user asked for quiet, so logs and pipes stay clean.
#include <cstddef>
#include <string>

namespace swarmlab::cli {

class Progress {
 public:
  Progress(std::string label, bool quiet);
  ~Progress();
  // `note` follows the counts, e.g. "2 failed, ETA 3m10s".
  void update(std::size_t done, std::size_t total, const std::string& note = "");

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace swarmlab::cli
