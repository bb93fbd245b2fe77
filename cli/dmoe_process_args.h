#pragma once
// The command line shared by `swarmlab dmoe-runtime` and `swarmlab dmoe-trainer` (usually written
// by `swarmlab launch <dmoe scenario>`, exec/dmoe_launch.h).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/peer_addresses.h"
#include "exec/dmoe/dmoe_process.h"

namespace swarmlab::cli {

struct DmoeProcessArgs {
  std::string scenario;
  std::uint32_t id = 0;
  std::string peers;
  std::uint64_t run_id = 0;
  double clock_origin = -1;
  double connect_timeout = 5;
  double idle_timeout = 120;
  exec::DmoeProcessConfig config;
};

inline void add_dmoe_process_options(CLI::App& sub, DmoeProcessArgs& a) {
  sub.add_option("scenario", a.scenario, "live DMoE scenario JSON file ({\"dmoe\": ...})")->required();
  sub.add_option("--id", a.id, "this process's peer index (runtimes first, then trainers)")->required();
  sub.add_option("--peers", a.peers, "ID=IP:PORT,... for every peer of the run")->required();
  sub.add_option("--run-id", a.run_id, "run identity shared by the processes of one launch");
  sub.add_option("--clock-origin", a.clock_origin, "CLOCK_MONOTONIC seconds of the run's t = 0 (default: now)");
  sub.add_option("--connect-timeout", a.connect_timeout, "TCP connect + handshake")->capture_default_str();
  sub.add_option("--idle-timeout", a.idle_timeout, "a trainer gives up after this long without a batch")->capture_default_str();
  sub.add_option("--data", a.config.data_dir, "the Fashion-MNIST directory")->capture_default_str();
  sub.add_option("--threads", a.config.threads, "torch intra-op threads")->capture_default_str();
  sub.add_option("--device", a.config.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
}

// The process's configuration; core::InputError for a bad scenario, std::invalid_argument for a
// bad address book or an id outside the run.
inline const exec::DmoeProcessConfig& dmoe_process_config(DmoeProcessArgs& a) {
  a.config.scenario = scenarios::load_dmoe_live_file(a.scenario);
  const std::uint32_t n = a.config.scenario.peers();
  if (a.id >= n) throw std::invalid_argument("--id: peer " + std::to_string(a.id) + " is not in the run (" + std::to_string(n) + " peers)");
  exec::LiveHostConfig& h = a.config.host;
  h.id = a.id;
  h.addresses = parse_peers(a.peers, n);
  if (!h.addresses[a.id]) throw std::invalid_argument("--peers: no address for this peer (" + std::to_string(a.id) + ")");
  h.seed = a.config.scenario.seed;
  h.connect_timeout_s = a.connect_timeout;
  h.idle_timeout_s = a.idle_timeout;
  h.clock_origin = a.clock_origin;
  h.network = a.run_id ^ 0xd30eull;
  h.pacing = false;  // loopback: no plan to pace by
  return a.config;
}

}  // namespace swarmlab::cli
