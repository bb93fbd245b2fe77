#pragma once
// Helpers for tests that start real peer processes through the launcher.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/launcher.h"

namespace swarmlab::exec::testing {

// A fresh folder under the system temp dir, removed by the destructor.
struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "swarmlab-exec-XXXXXX").string();
    path = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    // A failed test's files stay for its "see DIR" message.
    if (::testing::Test::HasFailure()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  std::string path;
};

// The JSON records peer `peer` wrote to out_dir/peer-N.jsonl, in order. A last line cut short (no
// newline: the peer was killed while writing it) is left out; any other line that does not parse
// fails the test.
inline std::vector<nlohmann::json> peer_records(const std::string& out_dir, std::size_t peer) {
  const std::string path = out_dir + "/peer-" + std::to_string(peer) + ".jsonl";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  std::vector<nlohmann::json> out;
  for (std::size_t at = 0, end; (end = all.find('\n', at)) != std::string::npos; at = end + 1) {
    nlohmann::json j = nlohmann::json::parse(all.substr(at, end - at), nullptr, false);
    if (j.is_discarded()) ADD_FAILURE() << path << ": a line that is not JSON: " << all.substr(at, end - at);
    else out.push_back(std::move(j));
  }
  return out;
}

// Its last "exit" record; null when it wrote none (it was killed).
inline nlohmann::json exit_record(const std::string& out_dir, std::size_t peer) {
  nlohmann::json last;
  for (nlohmann::json& j : peer_records(out_dir, peer))
    if (j.is_object() && j.value("event", "") == "exit") last = std::move(j);
  return last;
}

// Each peer's log, for the output of a test that failed: CI keeps only what a test prints.
inline std::string peer_logs(const LaunchResult& r) {
  std::string all;
  for (std::size_t i = 0; i < r.exit_codes.size(); ++i) {
    std::ifstream in(r.out_dir + "/peer-" + std::to_string(i) + ".log");
    all += "--- peer " + std::to_string(i) + " (exit " + std::to_string(r.exit_codes[i]) + ")\n";
    for (std::string line; std::getline(in, line);) all += line + "\n";
  }
  return all;
}

// Four GPU peers (one of them client-mode) and a CPU-only peer that only aggregates.
inline std::string small_scenario(const std::string& extra_peer_fields = "") {
  return R"({
  "name": "live-test", "seed": 3,
  "workload": {"model": "test", "parameters": 200000, "wire_precision": "fp32", "target_batch": 1024},
  "peers": [
    {"name": "gpu", "count": 3, "compute_sps": 100, "bandwidth_bps": "100 Mb/s", "latency_ms": 0)" +
         extra_peer_fields + R"(},
    {"name": "home", "compute_sps": 50, "download_bps": "100 Mb/s", "upload_bps": "50 Mb/s", "reachability": "client"},
    {"name": "cpu", "compute_sps": 0, "bandwidth_bps": "200 Mb/s"}
  ],
  "averaging": {"strategy": "ours", "rounds": 2, "part_bytes": 65536}
})";
}

inline LaunchOptions test_launch(const std::string& scenario, const std::string& out) {
  LaunchOptions o;
  o.scenario_path = scenario;
  o.out_dir = out;
  o.executable = std::string(SWARMLAB_BINARY_DIR) + "/swarmlab";
  o.deadline_s = 60;
  return o;
}

// A training launch (`launch --train`) of `scenario`, its files in `out`, given `deadline_s`;
// `precision` overrides the scenario's wire precision.
inline LaunchResult launch_training(const std::string& scenario, const std::string& out, TrainLaunch train,
                                    double deadline_s, std::optional<core::codec::Codec> precision = std::nullopt) {
  LaunchOptions o = test_launch(scenario, out);
  o.deadline_s = deadline_s;
  o.precision = precision;
  o.train = std::move(train);
  return launch(o);
}

}  // namespace swarmlab::exec::testing
