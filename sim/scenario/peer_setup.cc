#include "sim/scenario/peer_setup.h"

#include <algorithm>
#include <cmath>

#include "core/matchmaking/group_key.h"

namespace swarmlab::sim {

std::uint64_t scenario_state_bytes(const scenarios::Scenario& sc) {
  return static_cast<std::uint64_t>(
      std::llround(sc.training.state_bytes_per_parameter * static_cast<double>(sc.workload.parameters)));
}

core::training::RoundTimeoutBounds scenario_timeout_bounds(const scenarios::Scenario& sc) {
  core::training::RoundTimeoutBounds b;
  if (sc.averaging.sender_timeout_s) b.max_sender = *sc.averaging.sender_timeout_s;
  if (sc.averaging.round_timeout_s) b.max_round = *sc.averaging.round_timeout_s;
  b.min_sender = std::min(b.min_sender, b.max_sender);
  b.min_round = std::min(b.min_round, b.max_round);
  return b;
}

namespace {

core::training::CollaborativePeerConfig common_config(const scenarios::Scenario& sc, std::size_t i,
                                                      const TransportAssumptions& transport, double t) {
  core::training::CollaborativePeerConfig c;
  c.codec = sc.workload.wire_precision;
  c.part_bytes = sc.averaging.part_bytes;
  c.clip = sc.averaging.centered_clip;
  c.reduce_cost = sc.averaging.clip_cost;  // charged only by rounds that clip
  c.strategy = sc.averaging.strategy;
  if (sc.averaging.ps_peer) c.parameter_server = static_cast<core::PeerId>(*sc.averaging.ps_peer);
  c.timeouts = scenario_timeout_bounds(sc);
  c.capacity = peer_capacity(sc, i, t, transport);
  c.state.chunk_bytes = sc.training.state_chunk_bytes;
  return c;
}

}  // namespace

core::training::CollaborativePeerConfig training_peer_config(const scenarios::Scenario& sc, std::size_t i,
                                                             const TransportAssumptions& transport, double t) {
  core::training::CollaborativePeerConfig c = common_config(sc, i, transport, t);
  const auto& tr = sc.training;
  c.mode = tr.mode;
  c.target_batch = sc.workload.target_batch;
  if (tr.mode == core::training::Mode::Diloco) {
    c.quota = tr.local_steps * tr.local_batch;
    c.trainer.micro_batch = tr.local_batch;  // one compute call = one inner step
  } else {
    c.dpu = tr.dpu;
    c.trainer.micro_batch = tr.micro_batch;
  }
  return c;
}

core::training::CollaborativePeerConfig averaging_peer_config(const scenarios::Scenario& sc, std::size_t i,
                                                              const TransportAssumptions& transport) {
  core::training::CollaborativePeerConfig c = common_config(sc, i, transport, 0);
  c.quota = 1;
  c.trainer.micro_batch = 1;
  c.sync_state = false;
  return c;
}

core::training::DhtCoordinatorConfig dht_coordinator_config(const scenarios::Scenario& sc,
                                                            const core::training::CollaborativePeerConfig& peer) {
  core::training::DhtCoordinatorConfig c;
  c.progress.run = sc.name;
  c.progress.target = peer.step_target();
  c.progress.expiration = 30;  // DeDLOC's ALBERT runs (docs/hivemind.md §1)
  c.progress.refresh_period = 15;
  c.progress.client_mode = peer.capacity.client_mode;
  auto& m = c.matchmaking;
  m.prefix = sc.name + "_averaging";
  m.client_mode = peer.capacity.client_mode;
  m.min_group_size = 2;
  const std::size_t n = sc.peers.size();
  if (sc.averaging.group_size && *sc.averaging.group_size < n) {
    // Moshpit: groups of m along one axis of a d-dimensional grid at a time (docs/dedloc.md §3).
    const std::size_t group = std::max<std::size_t>(2, *sc.averaging.group_size);
    m.target_group_size = group;
    const std::size_t bits_per_axis = core::matchmaking::index_bits(group);
    std::size_t axes = 1;
    for (std::size_t cells = group; cells < n; cells *= group) ++axes;
    m.initial_bits.assign(axes * bits_per_axis, '0');
  } else {
    m.target_group_size = std::max<std::size_t>(2, n);
  }
  return c;
}

}  // namespace swarmlab::sim
