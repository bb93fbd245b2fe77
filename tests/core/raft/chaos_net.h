#pragma once
// A test-only world for Raft on top of sim::Engine: one Environment per peer, and a network that,
// seeded, drops, duplicates, delays and reorders messages and partitions peers. The real bindings
// deliver reliably and in order per pair; Raft must not depend on either, so the tests break both.
//
// Crashes are the harness's business (it destroys the node); the world only voids deliveries to a
// peer that is down and counts each peer's outstanding timers, so a test can check that a
// destroyed node left none behind.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/env.h"
#include "core/rng.h"
#include "sim/engine.h"

namespace swarmlab::core::raft::testing {

struct LinkFaults {
  double drop = 0;            // probability that a message is lost
  double duplicate = 0;       // probability that it is delivered twice
  Seconds min_delay = 0.001;  // one-way delay, uniform in [min_delay, max_delay]
  Seconds max_delay = 0.005;
  bool fifo = true;           // in order per ordered pair; false lets the delays reorder messages
};

class ChaosNet {
 public:
  ChaosNet(sim::Engine& engine, std::size_t peers, std::uint64_t seed) : engine_(engine), rng_(seed, 0) {
    for (PeerId p = 0; p < peers; ++p) peers_.push_back(std::make_unique<Peer>(*this, p, seed));
    blocked_.assign(peers * peers, false);
    last_delivery_.assign(peers * peers, 0.0);
  }

  Environment& env(PeerId p) { return *peers_.at(p); }
  std::size_t size() const { return peers_.size(); }
  sim::Engine& engine() { return engine_; }
  Seconds now() const { return engine_.now(); }

  void set_faults(const LinkFaults& f) { faults_ = f; }
  const LinkFaults& faults() const { return faults_; }
  // Faults for messages between two peers (both directions), overriding the default.
  void set_link_faults(PeerId a, PeerId b, const LinkFaults& f) {
    link_faults_[key(a, b)] = f;
    link_faults_[key(b, a)] = f;
  }
  void clear_link_faults() { link_faults_.clear(); }

  // Cuts (or restores) both directions between a and b; messages in flight are lost too.
  void set_blocked(PeerId a, PeerId b, bool blocked) {
    blocked_[key(a, b)] = blocked;
    blocked_[key(b, a)] = blocked;
  }
  // Cuts (or restores) the direction from -> to only.
  void set_blocked_one_way(PeerId from, PeerId to, bool blocked) { blocked_[key(from, to)] = blocked; }
  // Only peers on the same side can talk; peers in no group are cut off from everyone.
  void partition(const std::vector<std::vector<PeerId>>& groups) {
    std::vector<int> side(size(), -1);
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (PeerId p : groups[g]) side.at(p) = static_cast<int>(g);
    for (PeerId a = 0; a < size(); ++a)
      for (PeerId b = 0; b < size(); ++b) blocked_[key(a, b)] = a != b && (side[a] < 0 || side[a] != side[b]);
  }
  // Cuts `p` off from the peers in `others` only.
  void isolate(PeerId p, const std::vector<PeerId>& others) {
    for (PeerId o : others) set_blocked(p, o, true);
  }
  void heal() { blocked_.assign(blocked_.size(), false); }
  bool blocked(PeerId a, PeerId b) const { return blocked_[key(a, b)]; }

  // A down peer receives nothing (deliveries due while it is down are lost) and sends nothing.
  void set_down(PeerId p) {
    Peer& peer = *peers_.at(p);
    peer.up = false;
    ++peer.epoch;
  }
  void set_up(PeerId p) { peers_.at(p)->up = true; }
  bool is_up(PeerId p) const { return peers_.at(p)->up; }

  // Timers scheduled by `p` that have neither fired nor been cancelled.
  std::size_t outstanding_timers(PeerId p) const { return peers_.at(p)->timers.size(); }

  // Called for every message sent (before faults), for tests that watch the wire.
  std::function<void(PeerId from, PeerId to, const Message&)> on_send;
  // Called for every message delivered, before the receiver sees it.
  std::function<void(PeerId from, PeerId to, const Message&)> on_deliver;

  struct Stats {
    std::uint64_t sent = 0, delivered = 0, dropped = 0, duplicated = 0, to_unknown = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Peer final : Environment {
    Peer(ChaosNet& net, PeerId id, std::uint64_t seed) : net(net), id(id), rng_(seed, id + 1) {}
    PeerId self() const override { return id; }
    Seconds now() const override { return net.engine_.now(); }
    TimerHandle schedule(Seconds delay, std::function<void()> fn) override {
      const TimerHandle h = ++net.next_handle_;
      const auto event = net.engine_.after(delay, [this, h, fn = std::move(fn)] {
        if (timers.erase(h) == 0) return;
        fn();
      });
      timers.emplace(h, event);
      return h;
    }
    void cancel(TimerHandle h) override {
      auto it = timers.find(h);
      if (it == timers.end()) return;
      net.engine_.cancel(it->second);
      timers.erase(it);
    }
    void send(PeerId to, Message m) override { net.send(id, to, std::move(m)); }
    void set_pacing(PeerId, double) override {}
    void set_sink(Service* s) override { sink = s; }
    TimerHandle compute(std::uint64_t, std::function<void()>) override {
      throw std::logic_error("chaos net: no compute");
    }
    Rng& rng() override { return rng_; }

    ChaosNet& net;
    PeerId id;
    Rng rng_;
    Service* sink = nullptr;
    bool up = true;
    std::uint64_t epoch = 0;
    std::map<TimerHandle, sim::Engine::EventId> timers;
  };

  std::size_t key(PeerId a, PeerId b) const { return static_cast<std::size_t>(a) * size() + b; }

  void send(PeerId from, PeerId to, Message m) {
    ++stats_.sent;
    if (on_send) on_send(from, to, m);
    if (to >= size()) {
      ++stats_.to_unknown;
      return;
    }
    if (!peers_[from]->up || blocked(from, to)) {
      ++stats_.dropped;
      return;
    }
    auto lf = link_faults_.find(key(from, to));
    const LinkFaults& f = lf == link_faults_.end() ? faults_ : lf->second;
    if (f.drop > 0 && rng_.bernoulli(f.drop)) {
      ++stats_.dropped;
      return;
    }
    const int copies = f.duplicate > 0 && rng_.bernoulli(f.duplicate) ? 2 : 1;
    if (copies == 2) ++stats_.duplicated;
    for (int c = 0; c < copies; ++c) {
      Seconds at = engine_.now() + f.min_delay + (f.max_delay - f.min_delay) * rng_.uniform();
      if (f.fifo) {
        at = std::max(at, last_delivery_[key(from, to)]);
        last_delivery_[key(from, to)] = at;
      }
      Peer& dst = *peers_[to];
      engine_.at(at, [this, from, &dst, e = dst.epoch, m = c + 1 < copies ? m : std::move(m)]() mutable {
        if (!dst.up || dst.epoch != e || blocked(from, dst.id)) {
          ++stats_.dropped;
          return;
        }
        ++stats_.delivered;
        if (on_deliver) on_deliver(from, dst.id, m);
        if (dst.sink) dst.sink->handle(from, m);
      });
    }
  }

  sim::Engine& engine_;
  Rng rng_;
  LinkFaults faults_;
  std::map<std::size_t, LinkFaults> link_faults_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::vector<bool> blocked_;
  std::vector<Seconds> last_delivery_;
  TimerHandle next_handle_ = 0;
  Stats stats_;
};

}  // namespace swarmlab::core::raft::testing
