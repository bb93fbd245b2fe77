#pragma once
// Serves this peer's parameters + optimizer state to peers that fell behind, and downloads them
// from an up-to-date peer (docs/dedloc.md §1; hivemind's load_state_from_peers, 64 KiB chunks). The
// bytes are charged exactly (state_bytes, chunked) but carried as virtual payload: the simulator
// measures time and traffic, not the values.
#include <cstdint>
#include <functional>
#include <memory>

#include "core/env.h"
#include "core/training/state_messages.h"

namespace swarmlab::core::training {

struct StateConfig {
  std::uint64_t state_bytes = 0;         // parameters + optimizer state as sent
  std::uint64_t chunk_bytes = 64 * 1024;
  Seconds idle_timeout = 60;             // a download with no progress for this long fails
};

class StateService {
 public:
  // This peer's current optimizer step, reported with the state it serves.
  using StepSource = std::function<std::uint64_t()>;
  // ok = the whole state arrived; step = the provider's step it belongs to.
  using Done = std::function<void(bool ok, std::uint64_t step)>;

  StateService(Environment& env, StateConfig config, StepSource step);
  ~StateService();
  StateService(const StateService&) = delete;
  StateService& operator=(const StateService&) = delete;

  // Downloads the state from `provider`; one download at a time (a second call replaces the first,
  // whose callback never runs). `done` runs once, never inside this call.
  void download(PeerId provider, Done done);
  bool downloading() const { return static_cast<bool>(done_); }

  void handle(PeerId from, const Message& message);
  void on_link_failure(PeerId peer);

  std::uint64_t served() const { return served_; }
  std::uint64_t malformed() const { return malformed_; }

 private:
  void serve(PeerId to, std::uint64_t request_id);
  void on_header(const StateMessage& m);
  void on_chunk(const StateMessage& m);
  void arm_watchdog();
  void finish(bool ok);

  Environment& env_;
  StateConfig config_;
  StepSource step_;
  // The download in progress.
  Done done_;
  PeerId provider_ = 0;
  std::uint64_t request_id_ = 0;
  bool have_header_ = false;
  std::uint64_t step_at_provider_ = 0;
  std::uint32_t chunks_expected_ = 0, chunks_received_ = 0;
  Seconds last_heard_ = 0;
  TimerHandle watchdog_ = 0;
  std::uint64_t served_ = 0;
  std::uint64_t malformed_ = 0;
};

}  // namespace swarmlab::core::training
