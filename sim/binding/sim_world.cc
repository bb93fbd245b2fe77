#include "sim/binding/sim_world.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace swarmlab::sim {

using core::PeerId;

class SimWorld::PeerEnvironment final : public core::Environment {
 public:
  PeerEnvironment(SimWorld& world, PeerId id, SimPeerSpec spec, std::uint64_t seed)
      : world_(world), id_(id), spec_(std::move(spec)), rng_(seed, id + 1) {}

  PeerId self() const override { return id_; }
  core::Seconds now() const override { return world_.engine_.now(); }

  core::TimerHandle schedule(core::Seconds delay, std::function<void()> fn) override {
    if (!(delay >= 0)) throw std::invalid_argument("schedule: delay must be >= 0");
    return world_.engine_.after(delay, [this, epoch = epoch_, fn = std::move(fn)] {
      if (up_ && epoch == epoch_) fn();
    });
  }
  void cancel(core::TimerHandle handle) override { world_.engine_.cancel(handle); }

  void send(PeerId to, core::Message message) override {
    if (!up_) return;
    if (to >= world_.size()) throw std::out_of_range("send: unknown peer " + std::to_string(to));
    const std::uint64_t bytes = message.wire_size();
    bytes_sent_ += bytes;
    contacts_.insert(to);
    world_.peers_[to]->contacts_.insert(id_);
    auto shared = std::make_shared<core::Message>(std::move(message));
    const std::uint64_t from_epoch = epoch_;
    const std::uint64_t to_epoch = world_.peers_[to]->epoch_;
    in_flight_ += bytes;
    world_.peers_[to]->in_flight_ += bytes;
    world_.network_.transmit(id_, to, bytes, [this, to, from_epoch, to_epoch, shared, bytes](const TransferOutcome& o) {
      world_.landed(id_, to, bytes);
      if (o.delivered) {
        if (world_.trace_)
          world_.trace_->span(id_, "transfer", "send to " + world_.peers_[to]->spec_.name + " (" +
                                                   std::to_string(bytes) + " B)", o.started, o.finished);
        world_.deliver(id_, to, to_epoch, std::move(*shared));
      } else {
        world_.link_failed(id_, from_epoch, to);
        world_.link_failed(to, to_epoch, id_);
      }
    });
  }
  void set_sink(core::Service* sink) override { sink_ = sink; }
  void set_pacing(PeerId to, double bits_per_s) override {
    if (to >= world_.size()) throw std::out_of_range("set_pacing: unknown peer " + std::to_string(to));
    world_.network_.set_pacing(id_, to, bits_per_s > 0 ? bits_per_s : kUnlimited);
  }

  core::TimerHandle compute(std::uint64_t samples, std::function<void()> done) override {
    if (!(spec_.compute_sps > 0))
      throw std::logic_error("compute: peer " + spec_.name + " has no compute (compute_sps = 0)");
    const core::Seconds start = now();
    const core::Seconds duration = static_cast<double>(samples) / spec_.compute_sps;
    return schedule(duration, [this, start, samples, done = std::move(done)] {
      if (world_.trace_)
        world_.trace_->span(id_, "compute", std::to_string(samples) + " samples", start, now());
      done();
    });
  }

  core::Rng& rng() override { return rng_; }

  void trace(std::string_view category, std::string_view name, core::Seconds start, core::Seconds end) override {
    if (world_.trace_) world_.trace_->span(id_, std::string(category), std::string(name), start, end);
  }

  SimWorld& world_;
  PeerId id_;
  SimPeerSpec spec_;
  core::Rng rng_;
  core::Service* sink_ = nullptr;
  bool up_ = true;
  bool silent_ = false;  // went down without anyone being told
  std::uint64_t epoch_ = 0;  // bumped when the peer goes down: voids its timers and deliveries
  std::unordered_set<PeerId> contacts_;  // peers it has exchanged messages with (open connections)
  std::uint64_t bytes_sent_ = 0, bytes_received_ = 0;
  std::uint64_t in_flight_ = 0;  // bytes from or to this peer not yet delivered or failed
  // Several transfers to one peer can fail at the same instant; the core hears about it once.
  std::unordered_map<PeerId, core::Seconds> failure_noticed_;
};

SimWorld::SimWorld(Engine& engine, Network& network, std::vector<SimPeerSpec> peers, std::uint64_t seed)
    : engine_(engine), network_(network) {
  peers_.reserve(peers.size());
  for (PeerId i = 0; i < peers.size(); ++i)
    peers_.push_back(std::make_unique<PeerEnvironment>(*this, i, std::move(peers[i]), seed));
}

SimWorld::~SimWorld() = default;

core::Environment& SimWorld::env(PeerId peer) { return *peers_.at(peer); }

bool SimWorld::is_up(PeerId peer) const { return peers_.at(peer)->up_; }

void SimWorld::set_down(PeerId peer, Departure how) {
  PeerEnvironment& p = *peers_.at(peer);
  if (!p.up_) return;
  p.up_ = false;
  p.silent_ = how == Departure::Silent;
  ++p.epoch_;
  p.failure_noticed_.clear();
  network_.set_peer_up(peer, false);
  if (how == Departure::Crash) {
    // The OS closes the dead process's connections: each contact hears of it (in id order, so the
    // run stays deterministic whatever the hash set's order).
    std::vector<PeerId> contacts(p.contacts_.begin(), p.contacts_.end());
    std::sort(contacts.begin(), contacts.end());
    for (PeerId c : contacts) {
      const std::uint64_t epoch = peers_[c]->epoch_;
      engine_.after(0, [this, c, epoch, peer] { link_failed(c, epoch, peer); });
    }
  }
  p.contacts_.clear();
}

void SimWorld::set_up(PeerId peer) {
  PeerEnvironment& p = *peers_.at(peer);
  if (p.up_) return;
  p.up_ = true;
  p.silent_ = false;
  network_.set_peer_up(peer, true);
}

void SimWorld::set_trace(ChromeTrace* trace) {
  trace_ = trace;
  if (trace_)
    for (auto& p : peers_) trace_->name_track(p->id_, p->spec_.name);
}

std::uint64_t SimWorld::bytes_sent(PeerId peer) const { return peers_.at(peer)->bytes_sent_; }
std::uint64_t SimWorld::bytes_received(PeerId peer) const { return peers_.at(peer)->bytes_received_; }
std::uint64_t SimWorld::bytes_in_flight(PeerId peer) const { return peers_.at(peer)->in_flight_; }

void SimWorld::charge(PeerId peer, std::uint64_t sent, std::uint64_t received) {
  peers_.at(peer)->bytes_sent_ += sent;
  peers_.at(peer)->bytes_received_ += received;
}

void SimWorld::landed(PeerId from, PeerId to, std::uint64_t bytes) {
  peers_[from]->in_flight_ -= bytes;
  peers_[to]->in_flight_ -= bytes;
}

void SimWorld::deliver(PeerId from, PeerId to, std::uint64_t to_epoch, core::Message message) {
  PeerEnvironment& dst = *peers_[to];
  if (!dst.up_ || dst.epoch_ != to_epoch || !dst.sink_) return;
  ++messages_delivered_;
  dst.bytes_received_ += message.wire_size();
  if (delivery_observer_) delivery_observer_(from, to, message);
  if (!dst.up_ || dst.epoch_ != to_epoch) return;  // the observer may have injected a failure
  dst.sink_->handle(from, message);
}

void SimWorld::link_failed(PeerId at, std::uint64_t at_epoch, PeerId other) {
  PeerEnvironment& p = *peers_[at];
  if (!p.up_ || p.epoch_ != at_epoch || !p.sink_) return;
  if (peers_[other]->silent_) return;  // nobody is told about a silent departure
  auto [it, inserted] = p.failure_noticed_.try_emplace(other, engine_.now());
  if (!inserted) {
    if (it->second == engine_.now()) return;
    it->second = engine_.now();
  }
  p.sink_->on_link_failure(other);
}

}  // namespace swarmlab::sim
