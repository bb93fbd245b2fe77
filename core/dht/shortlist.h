#pragma once
// The state of one iterative Kademlia lookup (FIND_NODE or FIND_VALUE): every node heard of,
// ordered by XOR distance to the target, with whether it was asked and how it answered.
//
// The lookup keeps up to α requests in flight, always to the closest nodes not yet asked among the
// k closest that have not failed; it has converged when those k have all answered (or nothing is
// left to ask). The hop of a node is how many sequential requests it took to hear of it: the
// nodes from our own table are hop 1, those they return hop 2, and so on.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/dht/contact.h"

namespace swarmlab::core::dht {

class Shortlist {
 public:
  enum class State : std::uint8_t { Fresh, InFlight, Responded, Failed };
  // Kept compact (the id is distance ^ target): lookups insert into this sorted array a lot.
  struct Candidate {
    NodeId distance;
    PeerId peer = 0;
    State state = State::Fresh;
    std::uint8_t hop = 1;
    NodeId id(const NodeId& target) const { return distance ^ target; }
    Contact contact(const NodeId& target) const { return {id(target), peer}; }
  };

  Shortlist(NodeId target, std::size_t k, std::size_t alpha) : target_(target), k_(k), alpha_(alpha) {
    candidates_.reserve(capacity());
  }

  // Candidates kept beyond this many are only the ones already asked: farther nodes nobody asked
  // are dropped, since a lookup that needs them has lost most of its window to failures anyway.
  std::size_t capacity() const { return 4 * k_; }

  const NodeId& target() const { return target_; }
  // Adds a node not heard of before; returns false if it was already known or too far to keep.
  bool add(const Contact& contact, int hop);

  // The next candidate to ask, if the window has one and fewer than α requests are in flight. The
  // caller must then call sent() or failed() for it.
  const Candidate* next() const;
  // Changes α for the requests sent from now on (a value lookup narrows it, node.h).
  void set_alpha(std::size_t alpha) { alpha_ = alpha; }
  // Narrows the window the lookup converges on to the `k` closest (a value lookup that has found
  // the value, node.h).
  void narrow_window(std::size_t k) { k_ = std::min(k_, k); }
  void sent(const NodeId& id);
  void responded(const NodeId& id);
  void failed(const NodeId& id);

  // Converged: nothing in flight and nobody left to ask in the window.
  bool converged() const { return in_flight_ == 0 && next_fresh() == nullptr; }
  std::size_t in_flight() const { return in_flight_; }
  const Candidate* find(const NodeId& id) const;
  // The closest nodes that answered, nearest first.
  std::vector<Contact> closest_responded(std::size_t count) const;
  const std::vector<Candidate>& candidates() const { return candidates_; }

 private:
  Candidate* locate(const NodeId& id);
  // The first Fresh candidate among the k closest that have not failed.
  const Candidate* next_fresh() const;

  NodeId target_;
  std::size_t k_;
  std::size_t alpha_;
  std::size_t in_flight_ = 0;
  std::vector<Candidate> candidates_;  // ascending distance
};

}  // namespace swarmlab::core::dht
