#include "core/early_messages.h"

namespace swarmlab::core {

EarlyMessages::~EarlyMessages() {
  for (const Held& h : held_) release(h);
}

void EarlyMessages::keep(PeerId from, const Message& message, std::uint64_t round_id) {
  if (limits_ && !limits_->hold(from, message.bytes.size())) {
    ++dropped_;
    std::deque<Held> keep;
    for (Held& h : held_) {
      if (h.from == from) {
        release(h);
        ++dropped_;
      } else {
        keep.push_back(std::move(h));
      }
    }
    held_ = std::move(keep);
    return;
  }
  if (held_.size() >= kMaxMessages) {
    release(held_.front());
    held_.pop_front();
    ++dropped_;
  }
  held_.push_back(Held{from, message, round_id});
}

std::vector<EarlyMessages::Held> EarlyMessages::take(std::uint64_t round_id) {
  std::vector<Held> taken;
  std::deque<Held> keep;
  for (Held& h : held_) {
    if (h.round_id == round_id) {
      release(h);
      taken.push_back(std::move(h));
    } else {
      keep.push_back(std::move(h));
    }
  }
  held_ = std::move(keep);
  return taken;
}

void EarlyMessages::release(const Held& h) {
  if (limits_) limits_->release(h.from, h.message.bytes.size());
}

}  // namespace swarmlab::core
