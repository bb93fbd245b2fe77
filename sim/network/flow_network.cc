#include "sim/network/flow_network.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

namespace swarmlab::sim {
namespace {

std::uint64_t pair_key(PeerId from, PeerId to) { return static_cast<std::uint64_t>(from) << 32 | to; }


}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, std::vector<LinkSpec> links, std::uint64_t control_bypass_bytes)
    : engine_(engine), links_(std::move(links)), control_bypass_bytes_(control_bypass_bytes), up_(links_.size(), true),
      up_epoch_(links_.size(), 0),
      resources_(2 * links_.size()), connections_of_peer_(links_.size()) {
  for (PeerId p = 0; p < links_.size(); ++p) {
    check_link_rate(links_[p].upload_bps, "flow network", "upload");
    check_link_rate(links_[p].download_bps, "flow network", "download");
    if (!(links_[p].latency_s >= 0)) throw std::invalid_argument("flow network: latency must be >= 0");
    resources_[upload_resource(p)].capacity_bps = links_[p].upload_bps;
    resources_[download_resource(p)].capacity_bps = links_[p].download_bps;
  }
}

void FlowNetwork::check_peer(PeerId p) const {
  if (p >= links_.size()) throw std::out_of_range("flow network: unknown peer " + std::to_string(p));
}

std::size_t FlowNetwork::PairIndex::probe(std::uint64_t key) const {
  // Fibonacci hashing of the pair; the table size is a power of two.
  const std::size_t mask = keys_.size() - 1;
  std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  while (keys_[i] != key && keys_[i] != kEmpty) i = (i + 1) & mask;
  return i;
}

FlowNetwork::Index FlowNetwork::PairIndex::find(std::uint64_t key) const {
  if (keys_.empty()) return kNone;
  const std::size_t i = probe(key);
  return keys_[i] == key ? values_[i] : kNone;
}

FlowNetwork::Index FlowNetwork::PairIndex::find_or_insert(std::uint64_t key, Index value) {
  if (2 * (count_ + 1) > keys_.size()) {  // keep the load at most 1/2
    std::vector<std::uint64_t> keys = std::move(keys_);
    std::vector<Index> values = std::move(values_);
    keys_.assign(std::max<std::size_t>(64, 2 * keys.size()), kEmpty);
    values_.assign(keys_.size(), kNone);
    for (std::size_t j = 0; j < keys.size(); ++j)
      if (keys[j] != kEmpty) {
        const std::size_t i = probe(keys[j]);
        keys_[i] = keys[j];
        values_[i] = values[j];
      }
  }
  const std::size_t i = probe(key);
  if (keys_[i] == key) return values_[i];
  keys_[i] = key;
  values_[i] = value;
  ++count_;
  return value;
}

FlowNetwork::Index FlowNetwork::connection_for(PeerId from, PeerId to) {
  const auto next = static_cast<Index>(connections_.size());
  const Index c = connection_index_.find_or_insert(pair_key(from, to), next);
  if (c == next) {
    connections_.push_back(Connection{from, to});
    connections_of_peer_[from].push_back(c);
    if (to != from) connections_of_peer_[to].push_back(c);
  }
  return c;
}

FlowNetwork::Index FlowNetwork::new_transfer(std::uint64_t bytes, Done done) {
  Index t;
  if (free_transfers_ != kNone) {
    t = free_transfers_;
    free_transfers_ = transfers_[t].next;
  } else {
    t = static_cast<Index>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& tr = transfers_[t];
  tr.bytes = bytes;
  tr.done = std::move(done);
  tr.next = kNone;
  return t;
}

void FlowNetwork::free_transfer(Index t) {
  transfers_[t].done = nullptr;
  transfers_[t].next = free_transfers_;
  free_transfers_ = t;
}

void FlowNetwork::transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
  send(from, to, bytes, std::move(done), false);
}

void FlowNetwork::transmit_control(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
  send(from, to, bytes, std::move(done), bytes <= control_bypass_bytes_);
}

void FlowNetwork::send(PeerId from, PeerId to, std::uint64_t bytes, Done done, bool bypass) {
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
  Connection& conn = connections_[c];
  if (bypass && conn.head == kNone) {
    if (const double rate = extra_flow_rate(from, to); rate > 0) {
      const Seconds now = engine_.now();
      conn.control_busy_until = std::max(now, conn.control_busy_until) + 8.0 * static_cast<double>(bytes) / rate;
      in_flight(new_transfer(bytes, std::move(done)), from, to, now, conn.control_busy_until);
      return;
    }
  }
  const Index t = new_transfer(bytes, std::move(done));
  if (conn.tail == kNone) {
    conn.head = conn.tail = t;
  } else {
    transfers_[conn.tail].next = t;
    conn.tail = t;
  }
  if (conn.flow == kNone && !conn.head_waits) start_when_free(c);
}

void FlowNetwork::start_when_free(Index c) {
  Connection& conn = connections_[c];
  if (conn.control_busy_until <= engine_.now()) return start_head(c);
  conn.head_waits = true;
  engine_.at(conn.control_busy_until, [this, c] {
    Connection& waiting = connections_[c];
    if (!waiting.head_waits) return;  // the connection failed meanwhile
    waiting.head_waits = false;
    if (waiting.head != kNone && waiting.flow == kNone) start_head(c);
  });
}

double FlowNetwork::extra_flow_rate(PeerId from, PeerId to) const {
  auto share = [&](Index r) { return resources_[r].capacity_bps / static_cast<double>(resources_[r].flows.size() + 1); };
  double rate = std::min(share(upload_resource(from)), share(download_resource(to)));
  for (const auto* table : {&pair_resource_, &pacing_resource_})
    if (auto it = table->find(pair_key(from, to)); it != table->end()) rate = std::min(rate, share(it->second));
  return rate;
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
    positions_.emplace_back();
  }
  Flow& l = flows_[id];
  l = Flow{};
  l.remaining_bits = 8.0 * static_cast<double>(transfers_[conn.head].bytes);
  l.updated = engine_.now();
  l.connection = c;
  l.resources[l.resource_count++] = upload_resource(conn.from);
  l.resources[l.resource_count++] = download_resource(conn.to);
  if (auto it = pair_resource_.find(pair_key(conn.from, conn.to)); it != pair_resource_.end())
    l.resources[l.resource_count++] = it->second;
  if (auto it = pacing_resource_.find(pair_key(conn.from, conn.to)); it != pacing_resource_.end())
    l.resources[l.resource_count++] = it->second;
  conn.flow = id;
  conn.head_started = engine_.now();
  ++active_flows_;
  attach(id);
}

void FlowNetwork::attach(Index id) {
  const Flow& l = flows_[id];
  for (std::uint32_t k = 0; k < l.resource_count; ++k) {
    Resource& r = resources_[l.resources[k]];
    positions_[id].in[k] = static_cast<Index>(r.flows.size());
    r.flows.push_back(id);
    mark_dirty(l.resources[k]);
  }
}

void FlowNetwork::detach(Index id) {
  Flow& l = flows_[id];
  for (std::uint32_t k = 0; k < l.resource_count; ++k) {
    Resource& r = resources_[l.resources[k]];
    const Index pos = positions_[id].in[k];
    const Index moved = r.flows.back();
    r.flows[pos] = moved;
    r.flows.pop_back();
    if (moved != id) {
      const Flow& m = flows_[moved];
      for (std::uint32_t j = 0; j < m.resource_count; ++j)
        if (m.resources[j] == l.resources[k]) positions_[moved].in[j] = pos;
    }
    mark_dirty(l.resources[k]);
  }
  engine_.cancel(l.finish);
  l.finish = 0;
  l.connection = kNone;
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
  auto& resources = scratch_resources_;
  auto& stack = scratch_stack_;
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
      Flow& l = flows_[id];
      if (l.visit == visit_epoch_) continue;
      l.visit = visit_epoch_;  // and unfrozen: l.frozen is an earlier recomputation
      advance(l);              // brought up to now at its old rate
      for (std::uint32_t k = 0; k < l.resource_count; ++k) {
        Resource& next = resources_[l.resources[k]];
        if (next.visit != visit_epoch_) {
          next.visit = visit_epoch_;
          stack.push_back(l.resources[k]);
        }
      }
    }
  }
  // No sorting needed for determinism: the search above is deterministic, and fill() does not
  // depend on the order of `resources` (its heap orders resources by (share, index)).
  fill(resources);
}

void FlowNetwork::recompute_all() {
  for (Index r = 0; r < resources_.size(); ++r)
    if (!resources_[r].flows.empty()) mark_dirty(r);
  recompute_dirty();
}

void FlowNetwork::fill(const std::vector<Index>& resources) {
  // Progressive filling. A resource's fair share rem/unfrozen only grows as flows freeze at the
  // current minimum, so a lazy min-heap of shares is exact: stale entries are re-pushed. The
  // (share, index) order is total, so the heap's history never matters.
  auto& heap = scratch_heap_;
  heap.clear();
  const auto later = std::greater<>();
  for (Index r : resources) {
    Resource& res = resources_[r];
    res.remaining = res.capacity_bps;
    res.unfrozen = static_cast<Index>(res.flows.size());
    if (res.unfrozen > 0) heap.emplace_back(res.remaining / res.unfrozen, r);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [share, r] = heap.back();
    heap.pop_back();
    Resource& res = resources_[r];
    if (res.unfrozen == 0) continue;
    const double current = std::max(0.0, res.remaining) / res.unfrozen;
    if (current > share) {
      heap.emplace_back(current, r);
      std::push_heap(heap.begin(), heap.end(), later);
      continue;
    }
    for (Index id : res.flows) {
      Flow& f = flows_[id];
      if (f.frozen == visit_epoch_) continue;
      f.frozen = visit_epoch_;
      for (std::uint32_t k = 0; k < f.resource_count; ++k) {
        Resource& other = resources_[f.resources[k]];
        other.remaining -= current;
        --other.unfrozen;
      }
      // Its rate is final: its finish event moves now if the rate changed (the order of these
      // reschedules, the order in which flows freeze, decides the order of finish events due at
      // the same instant).
      if (current != f.rate_bps || f.finish == 0) {
        f.rate_bps = current;
        reschedule(id);
      }
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
  const Index t = conn.head;
  conn.head = transfers_[t].next;
  if (conn.head == kNone) conn.tail = kNone;
  in_flight(t, conn.from, conn.to, conn.head_started, engine_.now());
  if (conn.head != kNone) {
    // Back-to-back message on the same connection: same resources, same share.
    f.remaining_bits = 8.0 * static_cast<double>(transfers_[conn.head].bytes);
    conn.head_started = engine_.now();
    reschedule(id);
  } else {
    conn.flow = kNone;
    detach(id);
  }
}

void FlowNetwork::in_flight(Index t, PeerId from, PeerId to, Seconds started, Seconds left) {
  Transfer& tr = transfers_[t];
  tr.started = started;
  tr.from = from;
  tr.to = to;
  tr.epoch_from = up_epoch_[from];
  tr.epoch_to = up_epoch_[to];
  engine_.at(left + path_latency(from, to), [this, t] { deliver(t); });
}

void FlowNetwork::deliver(Index t) {
  Transfer& tr = transfers_[t];
  // An end that went down while the last bytes were in flight voids the delivery.
  const bool ok = up_epoch_[tr.from] == tr.epoch_from && up_epoch_[tr.to] == tr.epoch_to && up_[tr.to];
  if (ok) bytes_delivered_ += tr.bytes;
  const TransferOutcome outcome{ok, tr.started, engine_.now()};
  Done done = std::move(tr.done);
  free_transfer(t);
  done(outcome);
}

void FlowNetwork::fail_connection(Index c) {
  Connection& conn = connections_[c];
  if (conn.flow != kNone) {
    detach(conn.flow);
    conn.flow = kNone;
  }
  const Seconds now = engine_.now();
  const Seconds notice = path_latency(conn.from, conn.to);
  while (conn.head != kNone) {
    const Index t = conn.head;
    conn.head = transfers_[t].next;
    engine_.after(notice, [this, done = std::move(transfers_[t].done), now] {
      done(TransferOutcome{false, now, engine_.now()});
    });
    free_transfer(t);
  }
  conn.tail = kNone;
  conn.head_waits = false;
  conn.control_busy_until = 0;  // coordination messages on the wire are voided at delivery (epochs)
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
  check_link_rate(download_bps, "flow network", "download");
  check_link_rate(upload_bps, "flow network", "upload");
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
  check_link_rate(bps, "flow network", "pair rate limit");
  const std::uint64_t key = pair_key(from, to);
  auto it = table.find(key);
  if (it == table.end()) {
    const Index r = static_cast<Index>(resources_.size());
    resources_.emplace_back();
    it = table.emplace(key, r).first;
    // A flow already on this pair must start crossing the new resource.
    if (const Index c = connection_index_.find(key); c != kNone && connections_[c].flow != kNone) {
      const Index id = connections_[c].flow;
      Flow& l = flows_[id];
      Resource& res = resources_[r];
      l.resources[l.resource_count] = r;
      positions_[id].in[l.resource_count] = static_cast<Index>(res.flows.size());
      ++l.resource_count;
      res.flows.push_back(id);
    }
  }
  if (resources_[it->second].capacity_bps == bps) return;
  resources_[it->second].capacity_bps = bps;
  mark_dirty(it->second);
}

double FlowNetwork::flow_rate_bps(PeerId from, PeerId to) const {
  const Index c = connection_index_.find(pair_key(from, to));
  if (c == kNone) return 0;
  const Connection& conn = connections_[c];
  return conn.flow == kNone ? 0 : flows_[conn.flow].rate_bps;
}

}  // namespace swarmlab::sim
