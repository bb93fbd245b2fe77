// swarmlab peer: one real peer process of a live averaging run (usually started by `launch`).
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/checks.h"
#include "cli/command.h"
#include "exec/live_scenario.h"
#include "exec/peer_process.h"
#include "scenarios/scenario_loader.h"
#include "sim/scenario/peer_setup.h"

namespace swarmlab::cli {
namespace {

struct PeerArgs {
  std::string scenario;
  std::uint32_t id = 0;
  std::string peers;
  std::string listen;
  std::string strategy = "ours";
  std::uint64_t rounds = 3;
  std::uint64_t parameters = 0;
  std::string codec;
  double scale = 1;
  double goodput = exec::kLiveGoodputFraction;
  double compute = -1, upload = -1, download = -1;
  bool client = false;
  std::uint64_t run_id = 0;
  double clock_origin = -1;
  double connect_timeout = 5, idle_timeout = 300;
  double sender_timeout = 30, round_timeout = 0;
  bool no_pacing = false;
  double pace_all = 0;
  std::string die_at;
  std::uint64_t check_stride = 0;
  std::string trace;
  std::string congestion;
};

// "0=10.77.0.1:7000,1=10.77.0.2:7000,3=..." -> addresses by id; ids missing from the list (up to
// the scenario's peer count) are client-mode peers.
std::vector<std::optional<exec::SocketAddress>> parse_peers(const std::string& text, std::size_t n) {
  std::vector<std::optional<exec::SocketAddress>> out(n);
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--peers: \"" + item + "\" is not ID=ADDRESS");
    const std::string index = item.substr(0, eq);
    // Plain digits: std::stoul would take "-1" and wrap it around.
    if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--peers: \"" + item + "\" does not start with a peer index (decimal digits)");
    const std::size_t id = std::stoul(index);
    if (id >= n) throw std::invalid_argument("--peers: peer " + std::to_string(id) + " is not in the scenario (" + std::to_string(n) + " peers)");
    if (out[id]) throw std::invalid_argument("--peers: peer " + std::to_string(id) + " is listed twice (expected one address per peer)");
    out[id] = exec::SocketAddress::parse(item.substr(eq + 1));
  }
  return out;
}

const bool registered = register_command(
    "peer", "Run one real peer of a live averaging run (TCP); normally started by `swarmlab launch`",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<PeerArgs>();
      sub.add_option("scenario", a->scenario, "scenario JSON file")->required();
      sub.add_option("--id", a->id, "this peer's index in the scenario")->required();
      sub.add_option("--peers", a->peers, "ID=IP:PORT,... for every peer that accepts connections (the transport's address book; coordination runs over the DHT)")->required();
      sub.add_option("--listen", a->listen, "bind here instead of this peer's --peers address");
      sub.add_option("--strategy", a->strategy, "ar, ps or ours")->check(CLI::IsMember(core::names_of(core::averaging::kStrategyNames)))->capture_default_str();
      sub.add_option("--rounds", a->rounds, "averaging rounds")->check(Count(1, 1000000, "a number of rounds"))->capture_default_str();
      sub.add_option("--parameters", a->parameters, "vector length (default: the scenario's)");
      sub.add_option("--codec", a->codec, "wire precision (default: the scenario's)")->check(CLI::IsMember(core::names_of(core::codec::kCodecNames)));
      sub.add_option("--scale", a->scale, "scenario rates are multiplied by this")->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--goodput", a->goodput, "announced bandwidth = scaled link rate × this")->check(Real(0.01, 1, "a fraction of the link rate"))->capture_default_str();
      sub.add_option("--announce-compute", a->compute, "announced samples/s (default: the scenario's)");
      sub.add_option("--announce-upload", a->upload, "announced upload bits/s (default: scenario × scale × goodput)");
      sub.add_option("--announce-download", a->download, "announced download bits/s (default: scenario × scale × goodput)");
      sub.add_flag("--client", a->client, "announce client mode (also implied by a missing --peers entry)");
      sub.add_option("--run-id", a->run_id, "run identity shared by the peers of one launch");
      sub.add_option("--clock-origin", a->clock_origin, "CLOCK_MONOTONIC seconds of the run's t = 0 (default: now)");
      sub.add_option("--connect-timeout", a->connect_timeout, "TCP connect + handshake")->capture_default_str();
      sub.add_option("--idle-timeout", a->idle_timeout, "give up after this long without a round")->capture_default_str();
      sub.add_option("--sender-timeout", a->sender_timeout, "upper bound of the adaptive sender timeout (core/training/round_timeouts.h)")->check(Positive(3600, "a number of seconds"))->capture_default_str();
      sub.add_option("--round-timeout", a->round_timeout, "upper bound of the adaptive round timeout (0: none)")->check(Real(0, 3600, "a number of seconds"));
      sub.add_flag("--no-pacing", a->no_pacing, "ignore the plan's pacing (links that are not the scenario's)");
      sub.add_option("--pace-all", a->pace_all, "pace every connection at this many bits/s (testing)");
      sub.add_option("--die-at", a->die_at, "ROUND+SECONDS: SIGKILL itself that long into that round (fault injection)");
      sub.add_option("--check-stride", a->check_stride, "check every k-th element against the exact average (0: about 1M per round)");
      sub.add_option("--trace", a->trace, "append a JSON-lines timeline here");
      sub.add_option("--congestion", a->congestion, "TCP congestion control for every connection (default: the system's)");
      return [a] {
        const scenarios::Scenario sc = scenarios::load_scenario(a->scenario);
        if (a->id >= sc.peers.size())
          throw std::invalid_argument("--id " + std::to_string(a->id) + ": the scenario has " + std::to_string(sc.peers.size()) + " peers");
        exec::LiveOverrides ov;
        ov.scale = a->scale;
        if (a->parameters) ov.parameters = a->parameters;
        if (!a->codec.empty()) ov.precision = core::codec::parse_codec(a->codec);
        scenarios::Scenario live = exec::live_view(sc, ov);
        live.averaging.strategy = *core::parse_name(core::averaging::kStrategyNames, a->strategy);
        live.averaging.sender_timeout_s = a->sender_timeout;
        if (a->round_timeout > 0) live.averaging.round_timeout_s = a->round_timeout;

        exec::PeerConfig c;
        c.id = a->id;
        c.name = sc.peers[a->id].name;
        c.addresses = parse_peers(a->peers, sc.peers.size());
        if (!a->listen.empty()) c.listen = exec::SocketAddress::parse(a->listen);
        c.peer = sim::averaging_peer_config(live, a->id, sim::TransportAssumptions{a->goodput});
        c.peer.capacity = exec::live_capacity(live, a->id, a->goodput);
        if (a->compute >= 0) c.peer.capacity.compute_sps = a->compute;
        if (a->upload >= 0) c.peer.capacity.upload_bps = a->upload;
        if (a->download >= 0) c.peer.capacity.download_bps = a->download;
        c.peer.capacity.client_mode = c.peer.capacity.client_mode || a->client || !c.addresses[a->id];
        c.coordination = sim::dht_coordinator_config(live, c.peer);
        c.parameters = live.workload.parameters;
        c.rounds = a->rounds;
        c.seed = live.seed;
        c.connect_timeout_s = a->connect_timeout;
        c.idle_timeout_s = a->idle_timeout;
        c.clock_origin = a->clock_origin;
        c.network = exec::network_id(sc, a->run_id);
        c.pacing = !a->no_pacing;
        c.pace_all_bps = a->pace_all;
        c.check_stride = a->check_stride;
        c.trace_path = a->trace;
        c.congestion_control = a->congestion;
        if (!a->die_at.empty()) {
          const auto plus = a->die_at.find('+');
          try {
            if (plus == std::string::npos) throw std::invalid_argument("");
            c.die_round = std::stoull(a->die_at.substr(0, plus));
            c.die_after_s = std::stod(a->die_at.substr(plus + 1));
          } catch (const std::exception&) {
            throw std::invalid_argument("--die-at \"" + a->die_at + "\": expected ROUND+SECONDS, e.g. 1+0.5");
          }
        }
        return exec::run_peer(c, std::cout, std::cerr);
      };
    });

}  // namespace
}  // namespace swarmlab::cli
