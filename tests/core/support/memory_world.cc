#include "support/memory_world.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace swarmlab::core::testing {

class MemoryWorld::Peer final : public Environment {
 public:
  Peer(MemoryWorld& world, PeerId id, PeerSpec spec, std::uint64_t seed)
      : world_(world), id_(id), spec_(spec), rng_(seed, id + 1) {}

  PeerId self() const override { return id_; }
  Seconds now() const override { return world_.now_; }

  TimerHandle schedule(Seconds delay, std::function<void()> fn) override {
    if (!(delay >= 0)) throw std::invalid_argument("schedule: delay must be >= 0");
    if (!up_) return world_.next_event_++;  // a down peer runs nothing: a handle that never fires
    const EventId id = world_.next_event_;  // the id at() is about to issue
    world_.at(world_.now_ + delay, [this, id, fn = std::move(fn)] {
      timers_.erase(id);
      fn();
    });
    timers_.insert(id);
    return id;
  }

  void cancel(TimerHandle handle) override {
    if (timers_.erase(handle)) {
      world_.cancel(handle);
      return;
    }
    if (running_.handle == handle && handle != 0) {
      world_.cancel(running_.event);
      running_ = {};
      start_next_job();
      return;
    }
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (it->handle == handle) {
        jobs_.erase(it);
        return;
      }
  }

  void send(PeerId to, Message message) override {
    if (to >= world_.size() || to == id_)
      throw std::out_of_range("send: peer " + std::to_string(id_) + " cannot send to peer " + std::to_string(to));
    if (!up_) return;
    world_.transmit(*this, to, std::move(message));
  }

  void set_pacing(PeerId to, double bits_per_s) override {
    if (to >= world_.size() || to == id_)
      throw std::out_of_range("set_pacing: peer " + std::to_string(id_) + " cannot pace peer " + std::to_string(to));
    if (!(bits_per_s >= 0)) throw std::invalid_argument("set_pacing: the rate must be >= 0 bits/s");
    if (bits_per_s > 0) pacing_[to] = bits_per_s;
    else pacing_.erase(to);
  }

  void set_sink(Service* sink) override { sink_ = sink; }

  TimerHandle compute(std::uint64_t samples, std::function<void()> done) override {
    if (!(spec_.compute_sps > 0))
      throw std::logic_error("compute: peer " + std::to_string(id_) + " has no compute (compute_sps = 0)");
    const TimerHandle handle = world_.next_event_++;
    if (!up_) return handle;
    jobs_.push_back({handle, samples, std::move(done)});
    if (running_.handle == 0) start_next_job();
    return handle;
  }

  Rng& rng() override { return rng_; }

  // When a message of `bytes` to `to`, queued now, has left: after the uplink (one FIFO at the
  // upload rate for all of this peer's messages) has carried it and, on a paced pair, after the
  // pair's own FIFO at its pacing rate has let it go. A paced connection is slow on its own: it
  // does not hold the uplink back from the others.
  Seconds departure(PeerId to, std::uint64_t bytes) {
    const double bits = 8.0 * static_cast<double>(bytes);
    Seconds sent = std::max(world_.now_, uplink_free_at_) + (spec_.upload_bps > 0 ? bits / spec_.upload_bps : 0.0);
    uplink_free_at_ = sent;
    if (auto it = pacing_.find(to); it != pacing_.end()) {
      Seconds& free_at = paced_free_at_[to];
      free_at = std::max(world_.now_, free_at) + bits / it->second;
      sent = std::max(sent, free_at);
    }
    return sent;
  }

  void go_down() {
    up_ = false;
    ++epoch_;
    for (EventId t : timers_) world_.cancel(t);
    timers_.clear();
    world_.cancel(running_.event);
    running_ = {};
    jobs_.clear();
    uplink_free_at_ = 0;
    paced_free_at_.clear();
    broken_.clear();
    refused_at_.clear();
  }

  struct Job {
    TimerHandle handle = 0;
    std::uint64_t samples = 0;
    std::function<void()> done;
  };
  struct Running {
    TimerHandle handle = 0;
    EventId event = 0;
  };

  void start_next_job() {
    if (jobs_.empty()) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_.handle = job.handle;
    running_.event = world_.after(static_cast<double>(job.samples) / spec_.compute_sps, [this, done = std::move(job.done)] {
      running_ = {};
      start_next_job();  // the accelerator moves on at once
      done();
    });
  }

  MemoryWorld& world_;
  PeerId id_;
  PeerSpec spec_;
  Rng rng_;
  Service* sink_ = nullptr;
  bool up_ = true;
  bool silent_ = false;      // went down without anyone being told
  std::uint64_t epoch_ = 0;  // bumped when the peer goes down: voids what was pending
  std::unordered_set<EventId> timers_;
  std::deque<Job> jobs_;
  Running running_;
  std::unordered_map<PeerId, double> pacing_;
  Seconds uplink_free_at_ = 0;
  std::unordered_map<PeerId, Seconds> paced_free_at_;  // per paced pair: when its FIFO is free
  std::unordered_set<PeerId> contacts_;  // peers it exchanged messages with (open connections)
  std::unordered_map<PeerId, std::uint64_t> broken_;  // other peer -> incarnation already reported
  std::unordered_map<PeerId, Seconds> refused_at_;     // other peer -> last refusal reported
  std::uint64_t bytes_sent_ = 0, bytes_received_ = 0;
};

MemoryWorld::MemoryWorld(std::vector<PeerSpec> peers, std::uint64_t seed)
    : fault_rng_(seed, 0),
      blocked_(peers.size() * peers.size(), false),
      last_arrival_(peers.size() * peers.size(), 0.0) {
  for (PeerId i = 0; i < peers.size(); ++i) {
    if (!(peers[i].latency >= 0) || !(peers[i].upload_bps >= 0) || !(peers[i].compute_sps >= 0))
      throw std::invalid_argument("memory world: peer " + std::to_string(i) + " has a negative latency or rate");
    peers_.push_back(std::make_unique<Peer>(*this, i, peers[i], seed));
  }
}

MemoryWorld::~MemoryWorld() = default;

Environment& MemoryWorld::env(PeerId p) { return peer(p); }

MemoryWorld::Peer& MemoryWorld::peer(PeerId p) const {
  if (p >= peers_.size()) throw std::out_of_range("memory world: unknown peer " + std::to_string(p));
  return *peers_[p];
}

MemoryWorld::EventId MemoryWorld::at(Seconds t, std::function<void()> fn) {
  const EventId id = next_event_++;
  events_.emplace(id, std::move(fn));
  queue_.emplace(std::max(t, now_), id);
  return id;
}

bool MemoryWorld::step() {
  while (!queue_.empty()) {
    const auto [t, id] = queue_.top();
    queue_.pop();
    auto it = events_.find(id);
    if (it == events_.end()) continue;  // cancelled
    std::function<void()> fn = std::move(it->second);
    events_.erase(it);
    now_ = t;
    fn();
    return true;
  }
  return false;
}

void MemoryWorld::run() {
  while (step()) {
  }
}

void MemoryWorld::run_until(Seconds t) {
  for (;;) {
    while (!queue_.empty() && !events_.count(std::get<1>(queue_.top()))) queue_.pop();
    if (queue_.empty() || std::get<0>(queue_.top()) > t) break;
    step();
  }
  now_ = std::max(now_, t);
}

bool MemoryWorld::is_up(PeerId p) const { return peer(p).up_; }

void MemoryWorld::set_down(PeerId p, Departure how) {
  Peer& x = peer(p);
  if (!x.up_) return;
  const std::uint64_t incarnation = x.epoch_;
  x.go_down();
  x.silent_ = how == Departure::Silent;
  if (how == Departure::Crash) {
    // Its connections close: each contact hears of it now, in id order (deterministic).
    std::vector<PeerId> contacts(x.contacts_.begin(), x.contacts_.end());
    std::sort(contacts.begin(), contacts.end());
    for (PeerId c : contacts) {
      const std::uint64_t epoch = peers_[c]->epoch_;
      after(0, [this, c, epoch, p, incarnation] { connection_broke(c, epoch, p, incarnation); });
    }
  }
  x.contacts_.clear();
}

void MemoryWorld::set_up(PeerId p) {
  Peer& x = peer(p);
  x.up_ = true;
  x.silent_ = false;
}

std::size_t MemoryWorld::outstanding_timers(PeerId p) const { return peer(p).timers_.size(); }

void MemoryWorld::transmit(Peer& from, PeerId to, Message message) {
  ++stats_.sent;
  if (on_send) on_send(from.id_, to, message);
  Peer& dst = *peers_[to];
  const std::uint64_t bytes = message.wire_size();
  from.bytes_sent_ += bytes;
  if (!dst.up_) {
    ++stats_.dropped;
    // The connection attempt is refused, unless the peer vanished silently (then nothing answers).
    if (!dst.silent_)
      after(from.spec_.latency + dst.spec_.latency,
            [this, f = from.id_, e = from.epoch_, to] { connection_refused(f, e, to); });
    return;
  }
  from.contacts_.insert(to);
  dst.contacts_.insert(from.id_);
  if (blocked(from.id_, to)) {
    ++stats_.dropped;
    return;
  }
  int copies = 1;
  if (faults_enabled_) {
    if (faults_.drop > 0 && fault_rng_.bernoulli(faults_.drop)) {
      ++stats_.dropped;
      return;
    }
    if (faults_.duplicate > 0 && fault_rng_.bernoulli(faults_.duplicate)) {
      copies = 2;
      ++stats_.duplicated;
    }
  }
  const Seconds sent = from.departure(to, bytes);
  auto shared = std::make_shared<const Message>(std::move(message));
  for (int c = 0; c < copies; ++c) {
    Seconds arrival = sent + (faults_enabled_
                                  ? faults_.min_delay + (faults_.max_delay - faults_.min_delay) * fault_rng_.uniform()
                                  : from.spec_.latency + dst.spec_.latency);
    Seconds& last = last_arrival_[key(from.id_, to)];
    if (!faults_enabled_ || faults_.fifo) arrival = std::max(arrival, last);
    last = std::max(last, arrival);
    at(arrival, [this, f = from.id_, fe = from.epoch_, to, te = dst.epoch_, shared] { deliver(f, fe, to, te, *shared); });
  }
}

void MemoryWorld::deliver(PeerId from, std::uint64_t from_epoch, PeerId to, std::uint64_t to_epoch,
                          const Message& message) {
  Peer& src = *peers_[from];
  Peer& dst = *peers_[to];
  // Lost with either end's incarnation, or to a partition that formed while it travelled.
  if (src.epoch_ != from_epoch || dst.epoch_ != to_epoch || !dst.up_ || blocked(from, to)) {
    ++stats_.dropped;
    return;
  }
  ++stats_.delivered;
  const std::uint64_t bytes = message.wire_size();
  dst.bytes_received_ += bytes;
  bytes_delivered_ += bytes;
  if (on_deliver) on_deliver(from, to, message);
  if (dst.epoch_ != to_epoch || src.epoch_ != from_epoch) return;  // the observer took a peer down
  if (dst.sink_) dst.sink_->handle(from, message);
}

void MemoryWorld::connection_broke(PeerId at, std::uint64_t at_epoch, PeerId other, std::uint64_t other_epoch) {
  Peer& p = *peers_[at];
  if (!p.up_ || p.epoch_ != at_epoch || !p.sink_) return;
  auto [it, inserted] = p.broken_.try_emplace(other, other_epoch);
  if (!inserted) {
    if (it->second == other_epoch) return;
    it->second = other_epoch;
  }
  p.sink_->on_link_failure(other);
}

void MemoryWorld::connection_refused(PeerId at, std::uint64_t at_epoch, PeerId other) {
  Peer& p = *peers_[at];
  if (!p.up_ || p.epoch_ != at_epoch || !p.sink_ || peers_[other]->silent_) return;
  auto [it, inserted] = p.refused_at_.try_emplace(other, now_);
  if (!inserted) {
    if (it->second == now_) return;
    it->second = now_;
  }
  p.sink_->on_link_failure(other);
}

std::uint64_t MemoryWorld::bytes_sent(PeerId p) const { return peer(p).bytes_sent_; }
std::uint64_t MemoryWorld::bytes_received(PeerId p) const { return peer(p).bytes_received_; }

void MemoryWorld::set_faults(const LinkFaults& f) {
  if (!(f.drop >= 0 && f.drop <= 1) || !(f.duplicate >= 0 && f.duplicate <= 1) || !(f.min_delay >= 0) ||
      !(f.max_delay >= f.min_delay))
    throw std::invalid_argument("memory world: faults need probabilities in [0, 1] and 0 <= min_delay <= max_delay");
  faults_ = f;
  faults_enabled_ = true;
}

void MemoryWorld::set_blocked(PeerId a, PeerId b, bool blocked) {
  set_blocked_one_way(a, b, blocked);
  set_blocked_one_way(b, a, blocked);
}

void MemoryWorld::set_blocked_one_way(PeerId from, PeerId to, bool blocked) {
  (void)peer(from);
  (void)peer(to);
  blocked_[key(from, to)] = blocked;
}

void MemoryWorld::partition(const std::vector<std::vector<PeerId>>& groups) {
  std::vector<int> side(size(), -1);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (PeerId p : groups[g]) side.at(p) = static_cast<int>(g);
  for (PeerId a = 0; a < size(); ++a)
    for (PeerId b = 0; b < size(); ++b) blocked_[key(a, b)] = a != b && (side[a] < 0 || side[a] != side[b]);
}

void MemoryWorld::isolate(PeerId p, const std::vector<PeerId>& others) {
  for (PeerId o : others)
    if (o != p) set_blocked(p, o, true);
}

void MemoryWorld::heal() { std::fill(blocked_.begin(), blocked_.end(), false); }

}  // namespace swarmlab::core::testing
