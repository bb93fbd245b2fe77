#pragma once
// Live mode's clock over another environment (usually a memory world's peer): every now() read is
// `step` later than the last, so time moves while a handler runs, where the memory world's and the
// simulator's clocks stand still within one. Code that checks a deadline against one read and then
// schedules `deadline - now()` with another can ask for a negative delay here, as it could live,
// where the event loop refuses it. A timer keeps the deadline its schedule() read asked for, as
// the live loop does; messages, compute and failures are the inner environment's.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/forwarding_environment.h"

namespace swarmlab::core::testing {

class MovingClockEnvironment final : public ForwardingEnvironment {
 public:
  MovingClockEnvironment(Environment& inner, Seconds step) : ForwardingEnvironment(inner), step_(step) {}

  Seconds now() const override { return clock_ = std::max(clock_, inner_.now()) + step_; }
  TimerHandle schedule(Seconds delay, std::function<void()> fn) override {
    if (!(delay >= 0)) throw std::invalid_argument("schedule: delay must be >= 0");
    const Seconds due = now() + delay;
    return inner_.schedule(due - inner_.now(), std::move(fn));
  }
  void send(PeerId to, Message message) override { inner_.send(to, std::move(message)); }
  void set_pacing(PeerId to, double bits_per_s) override { inner_.set_pacing(to, bits_per_s); }
  void set_sink(Service* sink) override { inner_.set_sink(sink); }

 private:
  Seconds step_;
  mutable Seconds clock_ = 0;
};

}  // namespace swarmlab::core::testing
