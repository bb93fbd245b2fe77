#include "sim/network/flow_network.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>
#include <string>

namespace swarmlab::sim {
namespace {

std::uint64_t pair_key(PeerId from, PeerId to) { return static_cast<std::uint64_t>(from) << 32 | to; }

void check_rate(double bps, const char* what) {
  if (!(bps >= 0)) throw std::invalid_argument(std::string("flow network: ") + what + " must be >= 0 bits/s");
}

}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, std::vector<LinkSpec> links)
    : engine_(engine), links_(std::move(links)), up_(links_.size(), true), up_epoch_(links_.size(), 0),
      resources_(2 * links_.size()), connections_of_peer_(links_.size()) {
  for (PeerId p = 0; p < links_.size(); ++p) {
    check_rate(links_[p].upload_bps, "upload");
    check_rate(links_[p].download_bps, "download");
    if (!(links_[p].latency_s >= 0)) throw std::invalid_argument("flow network: latency must be >= 0");
    resources_[upload_resource(p)].capacity_bps = links_[p].upload_bps;
    resources_[download_resource(p)].capacity_bps = links_[p].download_bps;
  }
}

void FlowNetwork::check_peer(PeerId p) const {
  if (p >= links_.size()) throw std::out_of_range("flow network: unknown peer " + std::to_string(p));
}

FlowNetwork::Index FlowNetwork::connection_for(PeerId from, PeerId to) {
  auto [it, inserted] = connection_index_.try_emplace(pair_key(from, to), static_cast<Index>(connections_.size()));
  if (inserted) {
    connections_.push_back(Connection{from, to, {}, kNone, 0});
    connections_of_peer_[from].push_back(it->second);
    if (to != from) connections_of_peer_[to].push_back(it->second);
  }
  return it->second;
}

void FlowNetwork::transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
  check_peer(from);
  check_peer(to);
  if (!up_[from] || !up_[to]) {
    // The connection attempt fails after the time it takes to notice.
    const Seconds now = engine_.now();
    engine_.after(path_latency(from, to), [done = std::move(done), now, this] {
      done(TransferOutcome{false, now, engine_.now()});
    });
    return;
  }
  const Index c = connection_for(from, to);
  connections_[c].queue.push_back(Transfer{bytes, std::move(done)});
  if (connections_[c].flow == kNone) start_head(c);
}

void FlowNetwork::start_head(Index c) {
  Connection& conn = connections_[c];
  Index id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<Index>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f = Flow{};
  f.connection = c;
  f.remaining_bits = 8.0 * static_cast<double>(conn.queue.front().bytes);
  f.updated = engine_.now();
  f.resources[f.resource_count++] = upload_resource(conn.from);
  f.resources[f.resource_count++] = download_resource(conn.to);
  if (auto it = pair_resource_.find(pair_key(conn.from, conn.to)); it != pair_resource_.end())
    f.resources[f.resource_count++] = it->second;
  if (auto it = pacing_resource_.find(pair_key(conn.from, conn.to)); it != pacing_resource_.end())
    f.resources[f.resource_count++] = it->second;
  conn.flow = id;
  conn.head_started = engine_.now();
  ++active_flows_;
  attach(id);
}

void FlowNetwork::attach(Index id) {
  Flow& f = flows_[id];
  for (int k = 0; k < f.resource_count; ++k) {
    Resource& r = resources_[f.resources[k]];
    f.position[k] = static_cast<Index>(r.flows.size());
    r.flows.push_back(id);
    mark_dirty(f.resources[k]);
  }
}

void FlowNetwork::detach(Index id) {
  Flow& f = flows_[id];
  for (int k = 0; k < f.resource_count; ++k) {
    Resource& r = resources_[f.resources[k]];
    const Index pos = f.position[k];
    const Index moved = r.flows.back();
    r.flows[pos] = moved;
    r.flows.pop_back();
    if (moved != id) {
      Flow& m = flows_[moved];
      for (int j = 0; j < m.resource_count; ++j)
        if (m.resources[j] == f.resources[k]) m.position[j] = pos;
    }
    mark_dirty(f.resources[k]);
  }
  engine_.cancel(f.finish);
  f.finish = 0;
  f.connection = kNone;
  free_flows_.push_back(id);
  --active_flows_;
}

void FlowNetwork::mark_dirty(Index resource) {
  Resource& r = resources_[resource];
  if (!r.dirty) {
    r.dirty = true;
    dirty_.push_back(resource);
  }
  schedule_recompute();
}

void FlowNetwork::schedule_recompute() {
  if (recompute_scheduled_) return;
  recompute_scheduled_ = true;
  // Runs after everything already scheduled for this instant, so simultaneous changes batch up.
  engine_.at(engine_.now(), [this] {
    recompute_scheduled_ = false;
    recompute_dirty();
  });
}

void FlowNetwork::advance(Flow& f) {
  const Seconds now = engine_.now();
  if (now > f.updated) {
    f.remaining_bits = std::max(0.0, f.remaining_bits - f.rate_bps * (now - f.updated));
    f.updated = now;
  }
}

void FlowNetwork::recompute_dirty() {
  if (dirty_.empty()) return;
  ++recomputations_;
  ++visit_epoch_;
  auto& flows = scratch_flows_;
  auto& resources = scratch_resources_;
  auto& stack = scratch_stack_;
  flows.clear();
  resources.clear();
  stack.clear();
  // Collect the connected components (resources linked by shared flows) of every dirty resource.
  for (Index r : dirty_) {
    resources_[r].dirty = false;
    if (resources_[r].visit != visit_epoch_) {
      resources_[r].visit = visit_epoch_;
      stack.push_back(r);
    }
  }
  dirty_.clear();
  while (!stack.empty()) {
    const Index r = stack.back();
    stack.pop_back();
    resources.push_back(r);
    for (Index id : resources_[r].flows) {
      Flow& f = flows_[id];
      if (f.visit == visit_epoch_) continue;
      f.visit = visit_epoch_;
      flows.push_back(id);
      for (int k = 0; k < f.resource_count; ++k) {
        Resource& next = resources_[f.resources[k]];
        if (next.visit != visit_epoch_) {
          next.visit = visit_epoch_;
          stack.push_back(f.resources[k]);
        }
      }
    }
  }
  // Deterministic order regardless of hash-map or stack history.
  std::sort(flows.begin(), flows.end());
  std::sort(resources.begin(), resources.end());
  fill(flows, resources);
}

void FlowNetwork::recompute_all() {
  for (Index r = 0; r < resources_.size(); ++r)
    if (!resources_[r].flows.empty()) mark_dirty(r);
  recompute_dirty();
}

void FlowNetwork::fill(const std::vector<Index>& flows, const std::vector<Index>& resources) {
  // Progressive filling. A resource's fair share rem/unfrozen only grows as flows freeze at the
  // current minimum, so a lazy min-heap of shares is exact: stale entries are re-pushed.
  using Item = std::pair<double, Index>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (Index r : resources) {
    Resource& res = resources_[r];
    res.remaining = res.capacity_bps;
    res.unfrozen = static_cast<Index>(res.flows.size());
    if (res.unfrozen > 0) heap.emplace(res.remaining / res.unfrozen, r);
  }
  for (Index id : flows) {
    advance(flows_[id]);
    flows_[id].frozen = false;
  }
  std::vector<std::pair<Index, double>> new_rates;
  new_rates.reserve(flows.size());
  while (!heap.empty()) {
    auto [share, r] = heap.top();
    heap.pop();
    Resource& res = resources_[r];
    if (res.unfrozen == 0) continue;
    const double current = std::max(0.0, res.remaining) / res.unfrozen;
    if (current > share) {
      heap.emplace(current, r);
      continue;
    }
    for (Index id : res.flows) {
      Flow& f = flows_[id];
      if (f.frozen) continue;
      f.frozen = true;
      new_rates.emplace_back(id, current);
      for (int k = 0; k < f.resource_count; ++k) {
        Resource& other = resources_[f.resources[k]];
        other.remaining -= current;
        --other.unfrozen;
      }
    }
  }
  for (auto [id, rate] : new_rates) {
    Flow& f = flows_[id];
    if (rate != f.rate_bps || f.finish == 0) {
      f.rate_bps = rate;
      reschedule(id);
    }
  }
}

void FlowNetwork::reschedule(Index id) {
  Flow& f = flows_[id];
  engine_.cancel(f.finish);
  f.finish = 0;
  if (f.remaining_bits <= 0) {
    f.finish = engine_.at(engine_.now(), [this, id] { on_finish(id); });
  } else if (f.rate_bps > 0) {
    f.finish = engine_.after(f.remaining_bits / f.rate_bps, [this, id] { on_finish(id); });
  }
}

void FlowNetwork::on_finish(Index id) {
  Flow& f = flows_[id];
  f.finish = 0;
  f.remaining_bits = 0;
  f.updated = engine_.now();
  const Index c = f.connection;
  Connection& conn = connections_[c];
  Transfer done = std::move(conn.queue.front());
  conn.queue.pop_front();
  const Seconds started = conn.head_started;
  const PeerId from = conn.from, to = conn.to;
  const std::uint64_t epoch_from = up_epoch_[from], epoch_to = up_epoch_[to];
  engine_.after(path_latency(from, to), [this, done = std::move(done), started, from, to, epoch_from, epoch_to] {
    // An end that went down while the last bytes were in flight voids the delivery.
    const bool ok = up_epoch_[from] == epoch_from && up_epoch_[to] == epoch_to && up_[to];
    if (ok) bytes_delivered_ += done.bytes;
    done.done(TransferOutcome{ok, started, engine_.now()});
  });
  if (!conn.queue.empty()) {
    // Back-to-back message on the same connection: same resources, same share.
    f.remaining_bits = 8.0 * static_cast<double>(conn.queue.front().bytes);
    conn.head_started = engine_.now();
    reschedule(id);
  } else {
    conn.flow = kNone;
    detach(id);
  }
}

void FlowNetwork::fail_connection(Index c) {
  Connection& conn = connections_[c];
  if (conn.flow != kNone) {
    detach(conn.flow);
    conn.flow = kNone;
  }
  const Seconds now = engine_.now();
  const Seconds notice = path_latency(conn.from, conn.to);
  while (!conn.queue.empty()) {
    Transfer t = std::move(conn.queue.front());
    conn.queue.pop_front();
    engine_.after(notice, [this, done = std::move(t.done), now] {
      done(TransferOutcome{false, now, engine_.now()});
    });
  }
}

void FlowNetwork::set_peer_up(PeerId peer, bool up) {
  check_peer(peer);
  if (up_[peer] == up) return;
  up_[peer] = up;
  if (!up) {
    ++up_epoch_[peer];
    for (Index c : connections_of_peer_[peer]) fail_connection(c);
  }
}

void FlowNetwork::set_capacity(PeerId peer, double download_bps, double upload_bps) {
  check_peer(peer);
  check_rate(download_bps, "download");
  check_rate(upload_bps, "upload");
  links_[peer].download_bps = download_bps;
  links_[peer].upload_bps = upload_bps;
  resources_[upload_resource(peer)].capacity_bps = upload_bps;
  resources_[download_resource(peer)].capacity_bps = download_bps;
  mark_dirty(upload_resource(peer));
  mark_dirty(download_resource(peer));
}

void FlowNetwork::set_pair_cap(PeerId from, PeerId to, double bps) {
  set_pair_resource(pair_resource_, from, to, bps);
}

void FlowNetwork::set_pacing(PeerId from, PeerId to, double bps) { set_pair_resource(pacing_resource_, from, to, bps); }

void FlowNetwork::set_pair_resource(std::unordered_map<std::uint64_t, Index>& table, PeerId from, PeerId to, double bps) {
  check_peer(from);
  check_peer(to);
  check_rate(bps, "pair rate limit");
  const std::uint64_t key = pair_key(from, to);
  auto it = table.find(key);
  if (it == table.end()) {
    const Index r = static_cast<Index>(resources_.size());
    resources_.emplace_back();
    it = table.emplace(key, r).first;
    // A flow already on this pair must start crossing the new resource.
    if (auto c = connection_index_.find(key); c != connection_index_.end() && connections_[c->second].flow != kNone) {
      const Index id = connections_[c->second].flow;
      Flow& f = flows_[id];
      Resource& res = resources_[r];
      f.resources[f.resource_count] = r;
      f.position[f.resource_count] = static_cast<Index>(res.flows.size());
      ++f.resource_count;
      res.flows.push_back(id);
    }
  }
  if (resources_[it->second].capacity_bps == bps) return;
  resources_[it->second].capacity_bps = bps;
  mark_dirty(it->second);
}

double FlowNetwork::flow_rate_bps(PeerId from, PeerId to) const {
  auto it = connection_index_.find(pair_key(from, to));
  if (it == connection_index_.end()) return 0;
  const Connection& conn = connections_[it->second];
  return conn.flow == kNone ? 0 : flows_[conn.flow].rate_bps;
}

}  // namespace swarmlab::sim
