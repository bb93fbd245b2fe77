#include "core/dht/shortlist.h"

#include <algorithm>

namespace swarmlab::core::dht {
namespace {
bool by_distance(const Shortlist::Candidate& c, const NodeId& d) { return c.distance < d; }
}  // namespace

bool Shortlist::add(const Contact& contact, int hop) {
  const NodeId d = contact.id ^ target_;
  auto it = std::lower_bound(candidates_.begin(), candidates_.end(), d, by_distance);
  if (it != candidates_.end() && it->distance == d) return false;
  const auto at = it - candidates_.begin();
  if (candidates_.size() >= capacity()) {
    // Make room by dropping the farthest node nobody asked, if it is farther than this one.
    auto drop = candidates_.end();
    for (auto j = candidates_.end(); j != candidates_.begin() + at;)
      if ((--j)->state == State::Fresh) {
        drop = j;
        break;
      }
    if (drop == candidates_.end()) {
      if (it == candidates_.end()) return false;  // farther than everything kept
    } else {
      candidates_.erase(drop);
    }
  }
  candidates_.insert(candidates_.begin() + at,
                     Candidate{d, contact.peer, State::Fresh, static_cast<std::uint8_t>(std::min(hop, 255))});
  return true;
}

Shortlist::Candidate* Shortlist::locate(const NodeId& id) {
  const NodeId d = id ^ target_;
  auto it = std::lower_bound(candidates_.begin(), candidates_.end(), d, by_distance);
  return it != candidates_.end() && it->distance == d ? &*it : nullptr;
}

const Shortlist::Candidate* Shortlist::find(const NodeId& id) const {
  return const_cast<Shortlist*>(this)->locate(id);
}

const Shortlist::Candidate* Shortlist::next_fresh() const {
  std::size_t window = 0;
  for (const Candidate& c : candidates_) {
    if (c.state == State::Failed) continue;
    if (window++ == k_) break;
    if (c.state == State::Fresh) return &c;
  }
  return nullptr;
}

const Shortlist::Candidate* Shortlist::next() const {
  if (in_flight_ >= alpha_) return nullptr;
  return next_fresh();
}

void Shortlist::sent(const NodeId& id) {
  Candidate* c = locate(id);
  if (!c || c->state != State::Fresh) return;
  c->state = State::InFlight;
  ++in_flight_;
}

void Shortlist::responded(const NodeId& id) {
  Candidate* c = locate(id);
  if (!c || c->state == State::Responded || c->state == State::Failed) return;
  if (c->state == State::InFlight) --in_flight_;
  c->state = State::Responded;
}

void Shortlist::failed(const NodeId& id) {
  Candidate* c = locate(id);
  if (!c || c->state == State::Responded || c->state == State::Failed) return;
  if (c->state == State::InFlight) --in_flight_;
  c->state = State::Failed;
}

std::vector<Contact> Shortlist::closest_responded(std::size_t count) const {
  std::vector<Contact> out;
  for (const Candidate& c : candidates_) {
    if (out.size() == count) break;
    if (c.state == State::Responded) out.push_back(c.contact(target_));
  }
  return out;
}

}  // namespace swarmlab::core::dht
