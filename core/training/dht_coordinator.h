#pragma once
// Coordination over the DHT, as a real collaboration runs it (docs/dedloc.md §3, §5): this peer's
// progress is published under "{run}_progress" (core/progress/progress_tracker.h) and everyone's
// is read back to estimate the collaboration's; averaging groups are found by hivemind's
// leader/follower matchmaking (core/matchmaking/matchmaker.h). The coordinator owns the peer's
// DHT node and hosts the DHT and matchmaking services.
//
// Publishing: at once when the step or the activity changes, otherwise at most every
// report_period (and the tracker republishes before the record expires).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dht/node.h"
#include "core/env.h"
#include "core/matchmaking/matchmaker.h"
#include "core/progress/progress_tracker.h"
#include "core/training/coordinator.h"

namespace swarmlab::core::training {

struct DhtCoordinatorConfig {
  dht::DhtConfig dht;
  progress::ProgressConfig progress;          // run name, step target, record expiration
  matchmaking::MatchmakingConfig matchmaking;
  Seconds report_period = 10;                 // publish at least this often while samples change
};

class DhtCoordinator final : public Coordinator {
 public:
  DhtCoordinator(Environment& env, DhtCoordinatorConfig config);
  ~DhtCoordinator() override;

  void attach(ServiceMux& mux) override;
  void join(std::vector<PeerId> bootstrap, Joined done) override;
  void report(const progress::LocalProgress& local) override;
  void fetch(ProgressCallback done) override;
  progress::GlobalProgress estimate(Seconds now, std::span<const PeerId> group) const override;
  void member_lost(PeerId peer) override;
  std::span<const StateHolder> peers_at(std::uint64_t step) const override;
  void set_announcement(std::vector<std::uint8_t> bytes) override;
  void look_for_group(GroupCallback done, Seconds timeout, Seconds due) override;
  void cancel_search() override;
  bool looking() const override;

  const dht::DhtNode& dht() const { return *dht_; }
  const matchmaking::Matchmaker& matchmaker() const { return *matchmaker_; }
  const progress::ProgressTracker& tracker() const { return *tracker_; }

 private:
  // This peer and every other whose live record is at `global_step` or one behind.
  std::size_t expected_members(std::uint64_t global_step) const;

  Environment& env_;
  DhtCoordinatorConfig config_;
  std::unique_ptr<dht::DhtNode> dht_;
  std::unique_ptr<progress::ProgressTracker> tracker_;
  std::unique_ptr<matchmaking::Matchmaker> matchmaker_;
  std::optional<progress::LocalProgress> published_;
  Seconds last_publish_ = 0;
  // The global step of the last progress read. A member that crashed leaves the expectation of
  // that read: the records are the read's, and this peer's own step may have moved past them.
  std::uint64_t read_step_ = 0;
  mutable std::vector<StateHolder> peers_at_;  // what peers_at() shows
};

}  // namespace swarmlab::core::training
