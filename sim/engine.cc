#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace swarmlab::sim {

Engine::Engine() = default;
Engine::~Engine() = default;  // chunks destroy their slots, and so the callbacks still pending

std::uint32_t Engine::allocate_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    return i;
  }
  if ((slot_count_ & kChunkMask) == 0) chunks_.push_back(std::make_unique<Slot[]>(std::size_t{1} << kChunkBits));
  meta_.push_back(0);
  return slot_count_++;
}

Engine::EventId Engine::at(Seconds t, Callback fn) {
  // + 0.0 turns -0.0 into +0.0, so that equal times compare equal in every respect.
  const Seconds when = std::max(t, now_) + 0.0;
  const std::uint32_t i = allocate_slot();
  // A free slot holds nothing that needs destroying (see cancel() and run_top()).
  const std::uint32_t generation = generation_of(meta_[i]);
  meta_[i] = generation << kGenerationShift | (fn.needs_destroy() ? kNeedsDestroy : 0) | kPending;
  slot(i).fn.take_over(fn);
  if (next_seq_ >= seq_limit_) renumber();
  const Entry e = make_entry(when, next_seq_++, i);
  if (top_consumed_) {
    top_consumed_ = false;
    sift_down(0, e);  // replaces the record of the event being run
  } else {
    heap_push(e);
  }
  ++live_;
  // The id packs the slot and its generation so a stale id can never cancel a reused slot.
  return (static_cast<EventId>(generation) << 32 | i) + 1;
}

void Engine::cancel(EventId id) {
  if (id == 0) return;
  const auto i = static_cast<std::uint32_t>((id - 1) & 0xFFFFFFFFu);
  const auto generation = static_cast<std::uint32_t>((id - 1) >> 32);
  if (i >= slot_count_) return;
  std::uint32_t& meta = meta_[i];
  if (state_of(meta) != kPending || generation_of(meta) != generation) return;
  if (meta & kNeedsDestroy) slot(i).fn = nullptr;  // what the callback holds is released now
  meta = (meta & ~(kStateMask | kNeedsDestroy)) | kCancelled;
  --live_;
  ++cancelled_;
  // The record stays in the heap until it surfaces; compaction bounds how many can pile up.
  if (cancelled_ > 1024 && cancelled_ > live_) compact();
}

void Engine::heap_push(Entry e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  Entry* h = heap_.data();
  while (i > 0) {
    const std::size_t parent = (i - 1) >> 2;
    if (!(e < h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

void Engine::sift_down(std::size_t i, Entry e) {
  Entry* h = heap_.data();
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = 4 * i + 1;
    std::size_t best;
    if (first + 4 <= n) {
      // Four children: a tournament whose picks can compile to conditional moves, since which
      // child is smallest is as good as random to a branch predictor.
      const std::size_t a = first + static_cast<std::size_t>(h[first + 1] < h[first]);
      const std::size_t b = first + 2 + static_cast<std::size_t>(h[first + 3] < h[first + 2]);
      best = h[b] < h[a] ? b : a;
    } else {
      if (first >= n) break;
      best = first;
      for (std::size_t c = first + 1; c < n; ++c)
        if (h[c] < h[best]) best = c;
    }
    if (!(h[best] < e)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = e;
}

void Engine::heap_pop() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

void Engine::compact() {
  settle();
  std::size_t kept = 0;
  for (const Entry& e : heap_) {
    if (state_of(meta_[entry_slot(e)]) == kCancelled) {
      release_slot(entry_slot(e));
    } else {
      heap_[kept++] = e;
    }
  }
  heap_.resize(kept);
  cancelled_ = 0;
  // Floyd's heap construction; the order of events does not depend on the heap's shape.
  if (kept > 1)
    for (std::size_t i = (kept - 2) / 4 + 1; i-- > 0;) sift_down(i, heap_[i]);
}

void Engine::renumber() {
  compact();
  // A sorted array is a heap; the new numbers keep the order of the old ones.
  std::sort(heap_.begin(), heap_.end());
  const Entry low = (Entry{1} << 64) - 1;  // seq and slot
  for (std::size_t k = 0; k < heap_.size(); ++k)
    heap_[k] = (heap_[k] & ~low) | static_cast<Entry>(k) << 32 | entry_slot(heap_[k]);
  next_seq_ = static_cast<std::uint32_t>(heap_.size());
}

void Engine::skip_cancelled() {
  settle();
  while (!heap_.empty()) {
    const std::uint32_t i = entry_slot(heap_.front());
    if (state_of(meta_[i]) != kCancelled) return;
    heap_pop();
    release_slot(i);
    --cancelled_;
  }
}

Seconds Engine::catch_up(Seconds limit) {
  skip_cancelled();
  if (external_) {
    external_->run_until(heap_.empty() ? limit : std::min(limit, entry_time(heap_.front())));
    skip_cancelled();  // it may have scheduled an event earlier than the previous top
  }
  return heap_.empty() ? std::numeric_limits<Seconds>::infinity() : entry_time(heap_.front());
}

void Engine::run_top() {
  const Entry top = heap_.front();
  top_consumed_ = true;  // popped by the first at() or the next look at the heap
  const std::uint32_t i = entry_slot(top);
  Slot& s = slot(i);
  meta_[i] = (meta_[i] & ~kStateMask) | kRunning;
  --live_;
  now_ = entry_time(top);
  ++processed_;
  // The slot is not reused while its callback runs (it is not free), and chunks never move, so
  // the callback runs in place. Released afterwards, even if it throws.
  struct Release {
    Engine& engine;
    std::uint32_t i;
    ~Release() {
      Slot& done = engine.slot(i);
      done.fn = nullptr;
      engine.release_slot(i);
    }
  } release{*this, i};
  s.fn();
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
  settle();
  if (!stopped_) now_ = std::max(now_, t);
}

}  // namespace swarmlab::sim
