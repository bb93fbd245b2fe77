#pragma once
// A minimal multi-peer world for testing the DHT node in the core's own test binary (which does
// not link the simulator): a time-ordered event queue, a fixed one-way latency between any two
// peers, and peers that can be taken down either loudly (senders get on_link_failure, as when a
// connection is refused) or silently (messages vanish, so only timeouts notice).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "core/env.h"

namespace swarmlab::core::dht::testing {

class FakeWorld {
 public:
  struct Sent {
    PeerId from, to;
    std::vector<std::uint8_t> bytes;
  };

  explicit FakeWorld(std::size_t peers, Seconds latency = 0.05, std::uint64_t seed = 7) : latency_(latency) {
    for (PeerId i = 0; i < peers; ++i) peers_.push_back(std::make_unique<Peer>(*this, i, seed));
  }

  Environment& env(PeerId p) { return *peers_.at(p); }
  Seconds now() const { return now_; }
  std::size_t size() const { return peers_.size(); }

  // Brings a peer down; `silent` drops messages to it without telling the sender.
  void set_down(PeerId p, bool silent = false) {
    peers_.at(p)->up = false;
    peers_.at(p)->silent = silent;
    ++peers_.at(p)->epoch;
  }
  bool is_up(PeerId p) const { return peers_.at(p)->up; }

  void run_until(Seconds t) {
    while (!queue_.empty() && std::get<0>(queue_.top()) <= t) step();
    now_ = std::max(now_, t);
  }
  void run_for(Seconds d) { run_until(now_ + d); }

  // Every message sent, for tests that inspect the wire.
  std::vector<Sent> sent;
  bool record = false;

 private:
  struct Peer final : Environment {
    Peer(FakeWorld& w, PeerId id, std::uint64_t seed) : world(w), id(id), rng_(seed, id + 1) {}
    PeerId self() const override { return id; }
    Seconds now() const override { return world.now_; }
    TimerHandle schedule(Seconds delay, std::function<void()> fn) override {
      const TimerHandle h = ++world.next_handle_;
      world.at(world.now_ + delay, [this, h, e = epoch, fn = std::move(fn)] {
        if (world.cancelled_.erase(h) == 0 && up && e == epoch) fn();
      });
      return h;
    }
    void cancel(TimerHandle h) override { world.cancelled_[h] = true; }
    void send(PeerId to, Message m) override {
      if (!up) return;
      if (world.record) world.sent.push_back({id, to, m.bytes});
      Peer& dst = *world.peers_.at(to);
      world.at(world.now_ + world.latency_, [this, &dst, e = dst.epoch, m = std::move(m)]() mutable {
        if (dst.up && dst.epoch == e) {
          if (dst.sink) dst.sink->handle(id, m);
        } else if (!dst.silent && up && sink) {
          sink->on_link_failure(dst.id);
        }
      });
    }
    void set_pacing(PeerId, double) override {}
    void set_sink(Service* s) override { sink = s; }
    TimerHandle compute(std::uint64_t, std::function<void()>) override {
      throw std::logic_error("fake world: no compute");
    }
    Rng& rng() override { return rng_; }

    FakeWorld& world;
    PeerId id;
    Rng rng_;
    Service* sink = nullptr;
    bool up = true, silent = false;
    std::uint64_t epoch = 0;
  };

  void at(Seconds t, std::function<void()> fn) {
    const std::uint64_t seq = next_seq_++;
    events_.emplace(seq, std::move(fn));
    queue_.emplace(t, seq);
  }
  void step() {
    const auto [t, seq] = queue_.top();
    queue_.pop();
    now_ = t;
    auto fn = std::move(events_.at(seq));
    events_.erase(seq);
    fn();
  }

  Seconds latency_;
  Seconds now_ = 0;
  std::uint64_t next_seq_ = 0;
  TimerHandle next_handle_ = 0;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::map<std::uint64_t, std::function<void()>> events_;
  std::priority_queue<std::tuple<Seconds, std::uint64_t>, std::vector<std::tuple<Seconds, std::uint64_t>>,
                      std::greater<>>
      queue_;
  std::map<TimerHandle, bool> cancelled_;
};

}  // namespace swarmlab::core::dht::testing
