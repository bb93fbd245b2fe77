#include "core/peer_limits.h"

#include <algorithm>
#include <string>

namespace swarmlab::core {

bool PeerLimits::banned(PeerId peer) const {
  const auto it = usage_.find(peer);
  return it != usage_.end() && env_.now() < it->second.banned_until;
}

void PeerLimits::ban(PeerId peer, Usage& usage) {
  usage.banned_until = env_.now() + config_.ban;
  usage.requests.clear();
  ++bans_;
  env_.trace("ban", "peer " + std::to_string(peer), env_.now(), usage.banned_until);
}

bool PeerLimits::hold(PeerId peer, std::uint64_t bytes) {
  Usage& u = usage_[peer];
  if (env_.now() < u.banned_until) return false;
  if (bytes > config_.max_held_bytes - u.held) {
    ban(peer, u);
    return false;
  }
  u.held += bytes;
  return true;
}

void PeerLimits::release(PeerId peer, std::uint64_t bytes) {
  const auto it = usage_.find(peer);
  if (it == usage_.end()) return;
  it->second.held -= std::min(bytes, it->second.held);
}

std::uint64_t PeerLimits::held(PeerId peer) const {
  const auto it = usage_.find(peer);
  return it == usage_.end() ? 0 : it->second.held;
}

bool PeerLimits::admit_request(PeerId peer) {
  Usage& u = usage_[peer];
  const Seconds now = env_.now();
  if (now < u.banned_until) return false;
  while (!u.requests.empty() && u.requests.front() <= now - config_.request_window) u.requests.pop_front();
  if (u.requests.size() >= config_.max_requests) {
    ++refused_requests_;
    env_.trace("refused", "peer " + std::to_string(peer), now, now);
    return false;
  }
  u.requests.push_back(now);
  return true;
}

}  // namespace swarmlab::core
