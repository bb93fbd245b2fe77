#pragma once
// Serves this peer's parameters + optimizer state to peers that fell behind, and downloads them
// from an up-to-date peer (docs/dedloc.md §1; hivemind's load_state_from_peers, 64 KiB chunks).
// A peer that holds an older step's state may ask for the updates since instead (the averaged
// vectors of the steps it missed, docs/interpretations.md §26); the provider refuses when it does
// not keep them.
// What is served comes from the learner (core/training/learner.h): real bytes, or, for a
// sizes-only learner, a size the simulator charges as virtual payload.
//
// The downloader trusts nothing: a header announcing more than max_state_bytes, chunks out of
// order or beyond the announced size, or silence for idle_timeout fail the download; the peer
// then asks someone else.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/env.h"
#include "core/peer_limits.h"
#include "core/training/state_messages.h"

namespace swarmlab::core::training {

struct StateConfig {
  std::uint64_t chunk_bytes = 64 * 1024;
  Seconds idle_timeout = 60;                          // a download with no progress for this long fails
  std::uint64_t max_state_bytes = std::uint64_t{1} << 36;  // 64 GiB: larger announcements are refused
};

// What a peer asks for: the whole state, or the steps taken since a state it holds.
struct StateWanted {
  bool updates = false;
  std::uint64_t since_step = 0, since_lineage = 0;  // updates: the state the asker holds
};

// What this peer serves when asked.
struct StateSnapshot {
  std::uint64_t step = 0;
  std::uint64_t lineage = 0;        // names the state (core/training/state_lineage.h)
  std::vector<std::uint8_t> bytes;  // the state, when the learner has values
  std::uint64_t virtual_bytes = 0;  // otherwise its size, charged but not carried
};

class StateService final : public Service {
 public:
  // nullopt: this peer cannot serve what is wanted (it keeps no such steps); the asker is told.
  using Source = std::function<std::optional<StateSnapshot>(const StateWanted&)>;
  // ok = all of it arrived; `state` is what the provider announced (step, lineage: where the
  // state or the updates lead) with the bytes received (empty when they travelled as virtual
  // bytes, and when !ok).
  using Done = std::function<void(bool ok, StateSnapshot state)>;

  // `limits` (optional, outliving the service): requests beyond a peer's budget are refused
  // (core/peer_limits.h).
  StateService(Environment& env, StateConfig config, Source source, PeerLimits* limits = nullptr);
  ~StateService() override;
  StateService(const StateService&) = delete;
  StateService& operator=(const StateService&) = delete;

  // Downloads the state from `provider`; one download at a time (a second call replaces the first,
  // whose callback never runs). `done` runs once, never inside this call.
  void download(PeerId provider, Done done) { request(provider, StateWanted{}, std::move(done)); }
  // Downloads the updates from (since_step, since_lineage) to the provider's state instead; a
  // provider that does not keep them refuses (ok = false).
  void download_updates(PeerId provider, std::uint64_t since_step, std::uint64_t since_lineage, Done done) {
    request(provider, StateWanted{true, since_step, since_lineage}, std::move(done));
  }
  bool downloading() const { return static_cast<bool>(done_); }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t served() const { return served_; }
  std::uint64_t malformed() const { return malformed_; }

 private:
  void request(PeerId provider, const StateWanted& wanted, Done done);
  void serve(PeerId to, std::uint64_t request_id, const StateWanted& wanted);
  void refuse(PeerId to, std::uint64_t request_id);
  void on_header(const StateMessage& m);
  void on_chunk(StateMessage& m);
  void arm_watchdog();
  void finish(bool ok);

  Environment& env_;
  StateConfig config_;
  Source source_;
  PeerLimits* limits_;
  // The download in progress.
  Done done_;
  PeerId provider_ = 0;
  std::uint64_t request_id_ = 0;
  bool have_header_ = false;
  std::uint64_t step_at_provider_ = 0, lineage_at_provider_ = 0;
  std::uint64_t total_bytes_ = 0, received_bytes_ = 0;
  std::uint32_t chunks_expected_ = 0, chunks_received_ = 0;
  std::vector<std::uint8_t> received_;
  Seconds last_heard_ = 0;
  TimerHandle watchdog_ = 0;
  std::uint64_t served_ = 0;
  std::uint64_t malformed_ = 0;
};

}  // namespace swarmlab::core::training
