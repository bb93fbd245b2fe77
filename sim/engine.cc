#include "sim/engine.h"

#include <algorithm>
#include <limits>

namespace swarmlab::sim {

Engine::EventId Engine::at(Seconds t, Callback fn) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.fn = std::move(fn);
  s.pending = true;
  heap_.push_back({std::max(t, now_), next_seq_++, slot, s.generation});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++live_;
  // The id packs the slot and its generation so a stale id can never cancel a reused slot.
  return (static_cast<EventId>(s.generation) << 32 | slot) + 1;
}

void Engine::cancel(EventId id) {
  if (id == 0) return;
  const auto slot = static_cast<std::uint32_t>((id - 1) & 0xFFFFFFFFu);
  const auto generation = static_cast<std::uint32_t>((id - 1) >> 32);
  if (slot >= slots_.size()) return;
  Slot& s = slots_[slot];
  if (!s.pending || s.generation != generation) return;
  s.fn = nullptr;
  s.pending = false;
  ++s.generation;  // the heap entry no longer matches and is skipped when it surfaces
  free_slots_.push_back(slot);
  --live_;
}

void Engine::skip_cancelled() {
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    const Slot& s = slots_[top.slot];
    if (s.pending && s.generation == top.generation) return;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
}

Seconds Engine::catch_up(Seconds limit) {
  skip_cancelled();
  if (external_) {
    external_->run_until(heap_.empty() ? limit : std::min(limit, heap_.front().time));
    skip_cancelled();  // it may have scheduled an event earlier than the previous top
  }
  return heap_.empty() ? std::numeric_limits<Seconds>::infinity() : heap_.front().time;
}

void Engine::run_top() {
  const Entry top = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
  Slot& s = slots_[top.slot];
  Callback fn = std::move(s.fn);
  s.fn = nullptr;
  s.pending = false;
  ++s.generation;
  free_slots_.push_back(top.slot);
  --live_;
  now_ = top.time;
  ++processed_;
  fn();
}

bool Engine::step() {
  catch_up(std::numeric_limits<Seconds>::infinity());
  if (heap_.empty()) return false;
  run_top();
  return true;
}

void Engine::run() {
  stopped_ = false;
  while (!stopped_ && step()) {
  }
}

void Engine::run_until(Seconds t) {
  stopped_ = false;
  while (!stopped_) {
    if (catch_up(t) > t) break;
    run_top();
  }
  if (!stopped_) now_ = std::max(now_, t);
}

}  // namespace swarmlab::sim
