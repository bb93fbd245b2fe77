#include "sim/binding/sim_world.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/service_ids.h"

namespace swarmlab::sim {

using core::PeerId;

namespace {

// Coordination traffic (docs/interpretations.md §27): messages of the services that never carry a round's
// payload or a state. The network may carry them outside its bandwidth sharing.
bool is_coordination(const core::Message& m) {
  using core::ServiceId;
  const auto service = core::peek_service(m.bytes);
  return m.virtual_bytes == 0 && service &&
         (*service == ServiceId::Dht || *service == ServiceId::Matchmaking || *service == ServiceId::Progress ||
          *service == ServiceId::Raft);
}

}  // namespace

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
  void cancel(core::TimerHandle handle) override {
    if (handle & kComputeBit) cancel_job(handle);
    else world_.engine_.cancel(handle);
  }

  void send(PeerId to, core::Message message) override {
    check_other(to, "send");
    if (!up_) return;
    PeerEnvironment& dst = *world_.peers_[to];
    const std::uint64_t bytes = message.wire_size();
    if (world_.connects_ && !world_.connects_(id_, to)) {
      // Behind NAT (docs/trust.md §4): the connection attempt goes nowhere, and the sender gives
      // up on it at once, as when a peer is down.
      world_.engine_.after(0, [this, to, epoch = epoch_] { world_.link_refused(id_, epoch, to); });
      return;
    }
    bytes_sent_ += bytes;
    // To a peer that is down the connection attempt is refused (the sender hears of it), unless
    // it vanished silently (nothing answers). Otherwise the two have a connection.
    const bool refused = !dst.up_;
    const bool refusal_noticed = refused && !dst.silent_;
    if (!refused) {
      contacts_.insert(to);
      dst.contacts_.insert(id_);
    }
    const bool control = is_coordination(message);
    auto shared = std::make_shared<core::Message>(std::move(message));
    const std::uint64_t from_epoch = epoch_;
    const std::uint64_t to_epoch = dst.epoch_;
    in_flight_ += bytes;
    dst.in_flight_ += bytes;
    Network::Done done = [this, to, from_epoch, to_epoch, shared, bytes, refused,
                          refusal_noticed](const TransferOutcome& o) {
      world_.landed(id_, to, bytes);
      if (o.delivered) {
        if (world_.trace_)
          world_.trace_->span(id_, "transfer", "send to " + world_.peers_[to]->spec_.name + " (" +
                                                   std::to_string(bytes) + " B)", o.started, o.finished);
        world_.deliver(id_, to, to_epoch, std::move(*shared));
      } else if (refused) {
        if (refusal_noticed) world_.link_refused(id_, from_epoch, to);
      } else {
        // The connection broke because one end went down: the other end hears of it.
        world_.link_broke(id_, from_epoch, to, to_epoch);
        world_.link_broke(to, to_epoch, id_, from_epoch);
      }
    };
    if (control) world_.network_.transmit_control(id_, to, bytes, std::move(done));
    else world_.network_.transmit(id_, to, bytes, std::move(done));
  }
  void set_sink(core::Service* sink) override { sink_ = sink; }
  void set_pacing(PeerId to, double bits_per_s) override {
    check_other(to, "set_pacing");
    world_.network_.set_pacing(id_, to, bits_per_s > 0 ? bits_per_s : kUnlimited);
  }

  // A peer's compute jobs run one at a time, in submission order, as on one accelerator (and as
  // the live compute worker runs them).
  core::TimerHandle compute(std::uint64_t samples, std::function<void()> done) override {
    if (!(spec_.compute_sps > 0))
      throw std::logic_error("compute: peer " + spec_.name + " has no compute (compute_sps = 0)");
    const core::TimerHandle handle = kComputeBit | next_job_++;
    if (!up_) return handle;  // a down peer runs nothing
    // The queue only holds jobs behind a running one (start_next_job runs the next as one ends).
    if (running_job_ == 0) run_job(handle, samples, std::move(done));
    else jobs_.push_back({handle, samples, std::move(done)});
    return handle;
  }

  core::Rng& rng() override { return rng_; }

  void trace(std::string_view category, std::string_view name, core::Seconds start, core::Seconds end) override {
    if (world_.trace_) world_.trace_->span(id_, std::string(category), std::string(name), start, end);
  }

  void check_other(PeerId to, const char* what) const {
    if (to >= world_.size() || to == id_)
      throw std::out_of_range(std::string(what) + ": peer " + spec_.name + " cannot address peer " + std::to_string(to));
  }

  void start_next_job() {
    if (jobs_.empty()) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    run_job(job.handle, job.samples, std::move(job.done));
  }
  void run_job(core::TimerHandle handle, std::uint64_t samples, std::function<void()> done) {
    running_job_ = handle;
    running_done_ = std::move(done);
    const core::Seconds start = now();
    const core::Seconds duration = static_cast<double>(samples) / spec_.compute_sps;
    // The callback stays with the peer, so the event's closure fits the engine's inline buffer.
    running_event_ = world_.engine_.after(duration, [this, start, samples] {
      running_job_ = 0;
      running_event_ = 0;
      std::function<void()> done = std::move(running_done_);
      if (world_.trace_)
        world_.trace_->span(id_, "compute", std::to_string(samples) + " samples", start, now());
      start_next_job();  // the accelerator moves on at once
      done();
    });
  }
  void cancel_job(core::TimerHandle handle) {
    if (handle == running_job_) {
      world_.engine_.cancel(running_event_);
      running_job_ = 0;
      running_event_ = 0;
      running_done_ = nullptr;
      start_next_job();
      return;
    }
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (it->handle == handle) {
        jobs_.erase(it);
        return;
      }
  }
  void drop_jobs() {
    world_.engine_.cancel(running_event_);
    running_job_ = 0;
    running_event_ = 0;
    running_done_ = nullptr;
    jobs_.clear();
  }

  // Compute handles live in the upper half of the handle space; engine ids never reach it.
  static constexpr core::TimerHandle kComputeBit = 1ull << 63;
  struct Job {
    core::TimerHandle handle;
    std::uint64_t samples;
    std::function<void()> done;
  };

  SimWorld& world_;
  PeerId id_;
  SimPeerSpec spec_;
  core::Rng rng_;
  core::Service* sink_ = nullptr;
  bool up_ = true;
  bool silent_ = false;  // went down without anyone being told
  std::uint64_t epoch_ = 0;  // bumped when the peer goes down: voids its timers and deliveries
  std::vector<bool> silent_incarnations_;  // per ended incarnation (epoch): did it vanish silently?
  std::unordered_set<PeerId> contacts_;  // peers it has exchanged messages with (open connections)
  std::uint64_t bytes_sent_ = 0, bytes_received_ = 0;
  std::uint64_t in_flight_ = 0;  // bytes from or to this peer not yet delivered or failed
  // A broken connection is reported once per incarnation of the other end, however many messages
  // were queued on it; refused connection attempts once per instant.
  std::unordered_map<PeerId, std::uint64_t> broken_reported_;
  std::unordered_map<PeerId, core::Seconds> refusal_reported_;
  std::deque<Job> jobs_;
  core::TimerHandle running_job_ = 0;
  Engine::EventId running_event_ = 0;
  std::function<void()> running_done_;  // the running job's callback
  std::uint64_t next_job_ = 1;
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
  const std::uint64_t incarnation = p.epoch_;
  p.up_ = false;
  p.silent_ = how == Departure::Silent;
  p.silent_incarnations_.push_back(p.silent_);
  ++p.epoch_;
  p.broken_reported_.clear();
  p.refusal_reported_.clear();
  p.drop_jobs();
  network_.set_peer_up(peer, false);
  if (how == Departure::Crash) {
    // The OS closes the dead process's connections: each contact hears of it (in id order, so the
    // run stays deterministic whatever the hash set's order).
    std::vector<PeerId> contacts(p.contacts_.begin(), p.contacts_.end());
    std::sort(contacts.begin(), contacts.end());
    for (PeerId c : contacts) {
      const std::uint64_t epoch = peers_[c]->epoch_;
      engine_.after(0, [this, c, epoch, peer, incarnation] { link_broke(c, epoch, peer, incarnation); });
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

void SimWorld::link_broke(PeerId at, std::uint64_t at_epoch, PeerId other, std::uint64_t other_epoch) {
  PeerEnvironment& p = *peers_[at];
  if (!p.up_ || p.epoch_ != at_epoch || !p.sink_) return;
  const PeerEnvironment& o = *peers_[other];
  // Only an ended incarnation breaks connections; nobody is told about a silent departure.
  if (other_epoch >= o.silent_incarnations_.size() || o.silent_incarnations_[other_epoch]) return;
  auto [it, inserted] = p.broken_reported_.try_emplace(other, other_epoch);
  if (!inserted) {
    if (it->second == other_epoch) return;  // already reported: one failure per connection
    it->second = other_epoch;
  }
  p.sink_->on_link_failure(other);
}

void SimWorld::link_refused(PeerId at, std::uint64_t at_epoch, PeerId other) {
  PeerEnvironment& p = *peers_[at];
  if (!p.up_ || p.epoch_ != at_epoch || !p.sink_) return;
  auto [it, inserted] = p.refusal_reported_.try_emplace(other, engine_.now());
  if (!inserted) {
    if (it->second == engine_.now()) return;
    it->second = engine_.now();
  }
  p.sink_->on_link_failure(other);
}

}  // namespace swarmlab::sim
