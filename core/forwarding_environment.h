#pragma once
// A layer of the environment seam over another environment (authentication, relays): time,
// timers, compute, randomness and traces pass through to the inner one; the layer overrides what
// it changes about messages.
#include <functional>
#include <string_view>

#include "core/env.h"

namespace swarmlab::core {

class ForwardingEnvironment : public Environment {
 public:
  explicit ForwardingEnvironment(Environment& inner) : inner_(inner) {}

  PeerId self() const override { return inner_.self(); }
  Seconds now() const override { return inner_.now(); }
  TimerHandle schedule(Seconds delay, std::function<void()> fn) override { return inner_.schedule(delay, std::move(fn)); }
  TimerHandle schedule_at(Seconds due, std::function<void()> fn) override { return inner_.schedule_at(due, std::move(fn)); }
  void cancel(TimerHandle handle) override { inner_.cancel(handle); }
  TimerHandle compute(std::uint64_t samples, std::function<void()> done) override { return inner_.compute(samples, std::move(done)); }
  Rng& rng() override { return inner_.rng(); }
  void trace(std::string_view category, std::string_view name, Seconds start, Seconds end) override {
    inner_.trace(category, name, start, end);
  }

 protected:
  Environment& inner_;
};

}  // namespace swarmlab::core
