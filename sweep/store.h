#pragma once
// A sweep's output folder: one result file per run (runs/<run>.json, deterministic) beside one
// wall-time file per run (runs/<run>.wall), each written atomically (a temporary file in the same
// folder, then rename), so a crash or Ctrl-C leaves either the whole file or none. A lock file
// keeps two sweeps from writing one folder at once.
//
//   OUT/runs/000017.json   the run's result (sweep/run.h)
//   OUT/runs/000017.wall   "<seconds> <where it ran>"
//   OUT/results.csv        the tidy table, OUT/runs_wall.csv, OUT/sweep.json (sweep/table.h)
#include <filesystem>
#include <optional>
#include <string>

#include "sweep/plan.h"
#include "sweep/run.h"

namespace swarmlab::sweep {

// Writes `content` to `path` atomically. Throws std::runtime_error naming the file on failure.
void write_atomic(const std::filesystem::path& path, const std::string& content);

struct WallRecord {
  double wall_s = 0;
  std::string where;  // "local pid 123", "rank 2 on host"
};

class RunStore {
 public:
  // Creates OUT/runs. `runs` (the plan's size) sets the width of file names.
  RunStore(std::filesystem::path out, std::size_t runs);

  const std::filesystem::path& out() const { return out_; }
  std::filesystem::path result_path(std::size_t index) const;

  void write(const SweepSpec& spec, const RunResult& r) const;
  void write_wall(std::size_t index, const WallRecord& w) const;
  // The stored result of `run`, if its file exists, parses and its key is the run's; else none.
  std::optional<RunResult> read(const SweepSpec& spec, const RunDesc& run, const std::string& key) const;
  std::optional<WallRecord> read_wall(std::size_t index) const;

 private:
  std::filesystem::path out_;
  int width_;
};

// An exclusive lock on OUT/.lock for the life of the object; throws std::runtime_error when
// another sweep holds it.
class OutputLock {
 public:
  explicit OutputLock(const std::filesystem::path& out);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace swarmlab::sweep
