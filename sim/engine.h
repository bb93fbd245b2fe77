#pragma once
// Discrete-event scheduler. Events run in (time, insertion order): two events due at the same
// instant run in the order they were scheduled, so a run is a pure function of its inputs.
//
// Layout, for speed (tests/bench/engine_bench.cc measures it against ns-3's schedulers): an event's
// callback lives inline in a slot of a chunked slab (no allocation for callables up to
// Callback::kInlineBytes), and the queue is a 4-ary min-heap of small (time, seq, slot) records.
// Cancellation is lazy (the slot is marked, its record skipped when it surfaces), with a compaction
// once cancelled records outnumber live ones, so cancel-heavy workloads keep the heap small.
//
// This header is also compiled as C++17 (sim/ns3), so it uses nothing newer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env.h"

namespace swarmlab::sim {

using core::Seconds;

// Another discrete-event simulator whose events interleave with the engine's (ns-3's packet events,
// for a packet-level network backend). Before the engine runs an event at time t, the source runs
// its own events up to t, so the two clocks never cross.
class ExternalEventSource {
 public:
  virtual ~ExternalEventSource() = default;
  // Runs the source's events due at or before `t` (infinite: until it has nothing useful left) and
  // leaves its clock at `t`. It returns early, right after the event that scheduled an engine event,
  // so that engine event runs before any later external event.
  virtual void run_until(Seconds t) = 0;
};

// A move-only `void()` callable with inline storage: callables of up to kInlineBytes (a lambda
// capturing a few pointers, a std::function) are stored in place; larger ones on the heap.
class EventCallback {
 public:
  static constexpr std::size_t kInlineBytes = 48;

  EventCallback() noexcept = default;
  EventCallback(std::nullptr_t) noexcept {}
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, EventCallback> && std::is_invocable_v<D&>>>
  EventCallback(F&& f) {  // NOLINT: implicit, like std::function
    if constexpr (fits_inline<D>()) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &inline_ops<D>;
    } else {
      D* p = new D(std::forward<F>(f));
      ::new (static_cast<void*>(buf_)) D*(p);
      ops_ = &heap_ops<D>;
    }
  }
  EventCallback(EventCallback&& o) noexcept { take(o); }
  EventCallback& operator=(EventCallback&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  EventCallback& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  EventCallback(const EventCallback&) = delete;
  EventCallback& operator=(const EventCallback&) = delete;
  ~EventCallback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  // Whether destroying it does anything (it holds a non-trivial callable, or one on the heap).
  bool needs_destroy() const noexcept { return ops_ != nullptr && ops_->destroy != nullptr; }
  // Calling an empty callback throws std::bad_function_call, as std::function does.
  void operator()() {
    if (!ops_) throw std::bad_function_call();
    ops_->invoke(buf_);
  }
  // Takes `o`'s callable, assuming this one holds nothing that needs destroying (the engine's
  // free slots): the destination is written, never read, which matters when it is not in cache.
  void take_over(EventCallback& o) noexcept { take(o); }
  void reset() noexcept {
    if (ops_) {
      if (ops_->destroy) ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*destroy)(void*) noexcept;             // nullptr: trivially destructible
    void (*relocate)(void* to, void* from) noexcept;  // nullptr: the bytes can be copied
  };
  template <typename D>
  static constexpr bool fits_inline() {
    return sizeof(D) <= kInlineBytes && alignof(D) <= kAlign &&
           std::is_nothrow_move_constructible_v<D>;
  }
  template <typename D>
  static constexpr bool bitwise() {
    return std::is_trivially_copyable_v<D>;
  }
  template <typename D>
  static void invoke_inline(void* p) {
    (*static_cast<D*>(p))();
  }
  template <typename D>
  static void destroy_inline(void* p) noexcept {
    static_cast<D*>(p)->~D();
  }
  template <typename D>
  static void relocate_inline(void* to, void* from) noexcept {
    D* f = static_cast<D*>(from);
    ::new (to) D(std::move(*f));
    f->~D();
  }
  template <typename D>
  static void invoke_heap(void* p) {
    (**static_cast<D**>(p))();
  }
  template <typename D>
  static void destroy_heap(void* p) noexcept {
    delete *static_cast<D**>(p);
  }
  template <typename D>
  static constexpr Ops inline_ops{&invoke_inline<D>, bitwise<D>() ? nullptr : &destroy_inline<D>,
                                  bitwise<D>() ? nullptr : &relocate_inline<D>};
  template <typename D>
  static constexpr Ops heap_ops{&invoke_heap<D>, &destroy_heap<D>, nullptr};

  void take(EventCallback& o) noexcept {
    ops_ = o.ops_;
    if (!ops_) return;
    if (ops_->relocate)
      ops_->relocate(buf_, o.buf_);
    else
      std::memcpy(buf_, o.buf_, kInlineBytes);
    o.ops_ = nullptr;
  }

  // 8-byte alignment keeps the whole object at 56 bytes (a slot with its bookkeeping is one cache
  // line); a callable that needs more goes to the heap.
  static constexpr std::size_t kAlign = 8;
  alignas(kAlign) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

class Engine {
 public:
  // Identifies a scheduled event for cancel(); 0 is never issued.
  using EventId = std::uint64_t;
  // Any void() callable converts to it (lambdas, std::function); move-only.
  using Callback = EventCallback;

  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Seconds now() const { return now_; }

  // Schedules `fn` at absolute time `t` (clamped to now: the past is not reachable).
  EventId at(Seconds t, Callback fn);
  EventId after(Seconds delay, Callback fn) { return at(now_ + delay, std::move(fn)); }
  // Cancels a pending event; a fired, cancelled or unknown id is ignored.
  void cancel(EventId id);

  // Runs the next event. Returns false when none is pending or stop() was called.
  bool step();
  // Runs until no event is pending or stop() is called.
  void run();
  // Runs every event due at or before `t`, then sets the clock to `t`.
  void run_until(Seconds t);
  // Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }

  // Interleaves `source`'s events with this engine's (nullptr: none). Not owned.
  void set_external(ExternalEventSource* source) { external_ = source; }

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }

 private:
  // One queued event, 16 bytes: the time's bits (a time is never negative, so its IEEE bits order
  // like the number), then a 32-bit insertion number (the tie-breaker), then the slot. Compared as
  // one 128-bit integer, which orders by (time, seq): seq is unique, so the slot never decides, and
  // the order is total, so the heap's shape never decides which event runs first either.
  // Insertion numbers are renumbered in order (seq_limit_) before they would wrap.
  __extension__ typedef unsigned __int128 Entry;
  static Entry make_entry(Seconds t, std::uint32_t seq, std::uint32_t slot) {
    std::uint64_t bits;
    std::memcpy(&bits, &t, sizeof bits);
    return static_cast<Entry>(bits) << 64 | static_cast<Entry>(seq) << 32 | slot;
  }
  static Seconds entry_time(Entry e) {
    const auto bits = static_cast<std::uint64_t>(e >> 64);
    Seconds t;
    std::memcpy(&t, &bits, sizeof t);
    return t;
  }
  static std::uint32_t entry_slot(Entry e) { return static_cast<std::uint32_t>(e); }
  static std::uint32_t entry_seq(Entry e) { return static_cast<std::uint32_t>(e >> 32); }
  // Per slot, in a compact array of its own (so that cancelling and skipping cancelled records
  // rarely touch the callbacks): the state, whether the callback needs destroying, generation.
  enum State : std::uint32_t { kFree = 0, kPending = 1, kCancelled = 2, kRunning = 3 };
  static constexpr std::uint32_t kStateMask = 3, kNeedsDestroy = 4, kGenerationShift = 3;
  static std::uint32_t state_of(std::uint32_t meta) { return meta & kStateMask; }
  static std::uint32_t generation_of(std::uint32_t meta) { return meta >> kGenerationShift; }
  // The callbacks, in chunks that never move (a callback runs in place).
  struct alignas(64) Slot {
    Callback fn;
  };
  static constexpr unsigned kChunkBits = 9;  // slots per chunk: 512 (32 KiB)
  static constexpr std::uint32_t kChunkMask = (1u << kChunkBits) - 1;

  Slot& slot(std::uint32_t i) { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  std::uint32_t allocate_slot();
  // Frees a slot whose callback is gone (or trivially destructible) and bumps its generation.
  void release_slot(std::uint32_t i) {
    meta_[i] = (generation_of(meta_[i]) + 1) << kGenerationShift;
    free_slots_.push_back(i);
  }

  // 4-ary heap in heap_[0..size): children of i are 4i+1 .. 4i+4.
  void heap_push(Entry e);
  void heap_pop();                 // removes heap_[0]
  void sift_down(std::size_t i, Entry e);
  void compact();                  // drops cancelled records, rebuilds the heap
  void renumber();                 // compacts, then gives the records seq 0, 1, ... in order

  // The record of the event being run stays on top of the heap while it runs (`top_consumed_`):
  // the first event it schedules replaces it with one sift-down instead of a pop and a push.
  void settle() {
    if (top_consumed_) {
      top_consumed_ = false;
      heap_pop();
    }
  }
  // Pops cancelled entries off the top of the heap.
  void skip_cancelled();
  // Lets the external source catch up to min(limit, next event); returns the next event's time.
  Seconds catch_up(Seconds limit);
  // Runs the event on top of the heap (there must be one).
  void run_top();

  std::vector<Entry> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<std::uint32_t> meta_;  // per slot
  std::uint32_t slot_count_ = 0;
  std::vector<std::uint32_t> free_slots_;
  std::size_t cancelled_ = 0;  // cancelled records still in the heap
  bool top_consumed_ = false;
  Seconds now_ = 0;
  std::uint32_t next_seq_ = 0;
  std::uint32_t seq_limit_ = 0xFFFFFFFFu;  // lowered by tests to exercise renumber()
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  bool stopped_ = false;
  ExternalEventSource* external_ = nullptr;

  friend struct EngineTestAccess;  // tests/sim/engine_test.cc
};

}  // namespace swarmlab::sim
