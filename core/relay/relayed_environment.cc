#include "core/relay/relayed_environment.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/relay/relay_frame.h"

namespace swarmlab::core::relay {

RelayedEnvironment::RelayedEnvironment(Environment& inner, const Reachability& reachability)
    : ForwardingEnvironment(inner), reach_(reachability) {
  if (inner_.self() >= reach_.size())
    throw std::invalid_argument("relayed environment: peer " + std::to_string(inner_.self()) + " is not in the reachability table");
  inner_.set_sink(this);
}

RelayedEnvironment::~RelayedEnvironment() {
  *alive_ = false;
  inner_.set_sink(nullptr);
}

void RelayedEnvironment::send(PeerId to, Message message) {
  if (to == self()) throw std::out_of_range("send: a peer cannot send to itself");
  if (to >= reach_.size()) throw std::out_of_range("send: peer " + std::to_string(to) + " is not in the collaboration");
  if (!reach_.direct(self(), to) && !reach_.relay_for(self(), to)) return refuse(to);
  const double rate = layer_rate(to);
  if (!(rate > 0)) {
    // Unpaced, but behind anything still waiting from when it was paced: order is kept.
    const auto waiting = streams_.find(to);
    if (waiting == streams_.end() || waiting->second.queue.empty()) return transmit(to, std::move(message));
    waiting->second.queue.push_back(std::move(message));
    return rerelease(to);
  }
  Stream& s = streams_[to];
  if (s.queue.empty() && s.next_free <= now()) {
    s.next_free = now() + 8.0 * static_cast<double>(message.wire_size()) / rate;
    return transmit(to, std::move(message));
  }
  s.queue.push_back(std::move(message));
  if (!s.timer) s.timer = inner_.schedule_at(s.next_free, [this, to, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) release(to);
  });
}

void RelayedEnvironment::transmit(PeerId to, Message message) {
  if (reach_.direct(self(), to)) return inner_.send(to, std::move(message));
  const PeerId relay = *reach_.relay_for(self(), to);
  circuits_[relay].insert(to);
  ++stats_.sent_relayed;
  Message frame;
  frame.bytes = encode_frame(FrameKind::Forward, to, message.bytes);
  frame.virtual_bytes = message.virtual_bytes;
  inner_.send(relay, std::move(frame));
}

void RelayedEnvironment::release(PeerId to) {
  Stream& s = streams_[to];
  s.timer = 0;
  const double rate = layer_rate(to);
  while (!s.queue.empty() && (!(rate > 0) || s.next_free <= now())) {
    Message m = std::move(s.queue.front());
    s.queue.pop_front();
    if (rate > 0) s.next_free = std::max(s.next_free, now()) + 8.0 * static_cast<double>(m.wire_size()) / rate;
    transmit(to, std::move(m));
  }
  if (!s.queue.empty())
    s.timer = inner_.schedule_at(s.next_free, [this, to, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) release(to);
    });
}

void RelayedEnvironment::drop_stream(PeerId to) {
  const auto it = streams_.find(to);
  if (it == streams_.end()) return;
  inner_.cancel(it->second.timer);
  streams_.erase(it);
}

double RelayedEnvironment::requested(PeerId to) const {
  const auto it = requested_.find(to);
  return it == requested_.end() ? 0 : it->second;
}

bool RelayedEnvironment::shared(PeerId to) const {
  if (!reach_.direct(self(), to)) return true;  // a circuit, on the connection to its relay
  if (const auto it = paced_circuits_.find(to); it != paced_circuits_.end() && it->second > 0) return true;
  const auto it = relayed_.find(to);  // what this peer forwards as a relay rides on it
  return it != relayed_.end() && !it->second.empty();
}

double RelayedEnvironment::layer_rate(PeerId to) const { return shared(to) ? requested(to) : 0; }

void RelayedEnvironment::apply_pacing(PeerId to) {
  // A shared connection runs unpaced; each pair on it is paced here.
  inner_.set_pacing(to, shared(to) ? 0 : requested(to));
  rerelease(to);
}

void RelayedEnvironment::rerelease(PeerId to) {
  const auto it = streams_.find(to);
  if (it == streams_.end() || it->second.queue.empty()) return;
  inner_.cancel(it->second.timer);
  release(to);
}

void RelayedEnvironment::set_pacing(PeerId to, double bits_per_s) {
  if (to == self() || to >= reach_.size()) throw std::out_of_range("set_pacing: not another peer of the collaboration");
  const bool was = requested(to) > 0, is = bits_per_s > 0;
  requested_[to] = bits_per_s;
  if (reach_.direct(self(), to)) return apply_pacing(to);
  rerelease(to);
  // A circuit that will carry planned traffic shares the connection to its relay.
  if (const std::optional<PeerId> relay = reach_.relay_for(self(), to); relay && was != is) {
    paced_circuits_[*relay] += is ? 1 : -1;
    apply_pacing(*relay);
  }
}

void RelayedEnvironment::refuse(PeerId to) {
  ++stats_.refused;
  if (!refusing_.insert(to).second) return;
  inner_.schedule(0, [this, to, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    refusing_.erase(to);
    if (sink_) sink_->on_link_failure(to);
  });
}

void RelayedEnvironment::handle(PeerId from, const Message& message) {
  if (!is_relay_frame(message.bytes)) {
    if (sink_) sink_->handle(from, message);
    return;
  }
  RelayFrame frame;
  try {
    frame = decode_frame(message.bytes);
  } catch (const DecodeError&) {
    ++stats_.dropped_frames;
    return;
  }
  const PeerId peer = frame.peer;
  if (peer >= reach_.size() || peer == self() || peer == from) {
    ++stats_.dropped_frames;
    return;
  }
  switch (frame.kind) {
    case FrameKind::Forward: {
      // Only the pair's own relay forwards, so no peer can use another as an open proxy.
      if (reach_.relay_for(from, peer) != self()) {
        ++stats_.dropped_frames;
        return;
      }
      for (const auto& [end, other] : {std::pair{peer, from}, std::pair{from, peer}}) {
        auto& ends = relayed_[end];
        const bool first = ends.empty();
        ends.insert(other);
        if (first) apply_pacing(end);  // its connection now carries what this relay forwards
      }
      ++stats_.forwarded;
      Message deliver;
      deliver.bytes = encode_frame(FrameKind::Deliver, from, frame.payload);
      deliver.virtual_bytes = message.virtual_bytes;
      stats_.forwarded_bytes += deliver.wire_size();
      inner_.send(peer, std::move(deliver));
      return;
    }
    case FrameKind::Deliver: {
      if (reach_.relay_for(peer, self()) != from) {
        ++stats_.dropped_frames;
        return;
      }
      circuits_[from].insert(peer);
      ++stats_.received_relayed;
      if (!sink_) return;
      Message inner;
      inner.bytes.assign(frame.payload.begin(), frame.payload.end());
      inner.virtual_bytes = message.virtual_bytes;
      sink_->handle(peer, inner);
      return;
    }
    case FrameKind::Unreachable: {
      const auto circuit = circuits_.find(from);
      if (reach_.relay_for(self(), peer) != from || circuit == circuits_.end() || !circuit->second.erase(peer)) {
        ++stats_.dropped_frames;
        return;
      }
      drop_stream(peer);
      if (sink_) sink_->on_link_failure(peer);
      return;
    }
  }
}

void RelayedEnvironment::on_link_failure(PeerId peer) {
  // As a relay: the other ends of this peer's circuits hear that it is gone.
  if (const auto ends = relayed_.find(peer); ends != relayed_.end()) {
    const std::set<PeerId> others = std::move(ends->second);
    relayed_.erase(ends);
    for (PeerId other : others) {
      if (auto it = relayed_.find(other); it != relayed_.end()) it->second.erase(peer);
      inner_.send(other, Message{encode_frame(FrameKind::Unreachable, peer), 0});
    }
  }
  // As an end: everyone reached through a relay that is gone.
  std::set<PeerId> lost;
  if (const auto through = circuits_.find(peer); through != circuits_.end()) {
    lost = std::move(through->second);
    circuits_.erase(through);
  }
  // What waited for its pacing slot goes with the connection.
  drop_stream(peer);
  for (PeerId p : lost) drop_stream(p);
  if (!sink_) return;
  sink_->on_link_failure(peer);
  for (PeerId p : lost) sink_->on_link_failure(p);
}

}  // namespace swarmlab::core::relay
