#include "exec/live_scenario.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace swarmlab::exec {

scenarios::Scenario live_view(const scenarios::Scenario& scenario, const LiveOverrides& o) {
  if (!(o.scale > 0) || !std::isfinite(o.scale)) throw std::invalid_argument("scale must be a positive number");
  scenarios::Scenario s = scenario;
  for (auto& p : s.peers) {
    p.download_bps *= o.scale;
    p.upload_bps *= o.scale;
    if (o.zero_latency) p.latency_s = 0;
  }
  for (auto& cap : s.pair_caps) cap.bps *= o.scale;
  if (o.parameters) {
    if (*o.parameters == 0) throw std::invalid_argument("parameters must be >= 1");
    s.workload.parameters = *o.parameters;
  }
  if (o.precision) s.workload.wire_precision = *o.precision;
  return s;
}

Announce default_announce(const scenarios::Scenario& live, core::PeerId peer, double goodput) {
  const scenarios::PeerSpec& p = live.peers.at(peer);
  Announce a;
  a.compute_sps = p.compute_sps;
  a.download_bps = p.download_bps * goodput;
  a.upload_bps = p.upload_bps * goodput;
  a.client_mode = p.reachability == scenarios::Reachability::Client;
  return a;
}

scenarios::WirePrecision parse_precision(std::string_view name) {
  for (auto p : {scenarios::WirePrecision::Fp32, scenarios::WirePrecision::Fp16, scenarios::WirePrecision::Fp16Scaled,
                 scenarios::WirePrecision::Uint8})
    if (scenarios::to_string(p) == name) return p;
  throw std::invalid_argument("unknown wire precision \"" + std::string(name) + "\" (fp32, fp16, fp16-scaled, uint8)");
}

core::averaging::Strategy parse_strategy(std::string_view name) {
  if (name == "ar") return core::averaging::Strategy::AllReduce;
  if (name == "ps") return core::averaging::Strategy::ParameterServer;
  if (name == "ours") return core::averaging::Strategy::Planned;
  throw std::invalid_argument("unknown strategy \"" + std::string(name) + "\" (ar, ps, ours)");
}

std::uint64_t network_id(const scenarios::Scenario& scenario, std::uint64_t run_id) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the name, then mixed with seed and run
  for (unsigned char c : scenario.name) h = (h ^ c) * 1099511628211ull;
  h ^= scenario.seed * 0x9E3779B97F4A7C15ull;
  h ^= run_id * 0xD1B54A32D192ED03ull;
  return h;
}

}  // namespace swarmlab::exec
