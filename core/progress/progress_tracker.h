#pragma once
// Publishes this peer's training progress in the DHT and estimates the collaboration's
// (docs/dedloc.md §5).
//
// A training loop calls report() whenever its local progress changes (after each local batch, and
// after each optimizer step), fetch() when it wants a fresh view, and should_start_matchmaking()
// to decide when to look for an averaging group: once the estimated time to the next global step
// is below the time matchmaking needs, the group is ready when the samples are.
//
// Publishing is coalesced: at most one DHT store is in flight; reports that arrive meanwhile are
// folded into the next one. The record is republished every refresh_period even without reports,
// so it never expires while the peer lives (refresh_period < expiration).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dht/node.h"
#include "core/env.h"
#include "core/progress/global_progress.h"
#include "core/progress/local_progress.h"
#include "core/progress/peer_progress.h"

namespace swarmlab::core::progress {

struct ProgressConfig {
  std::string run;                // the DHT key is run + "_progress"
  StepTarget target;              // when the next global step is due
  Seconds expiration = 60;        // a record expires this long after it was published (DeDLOC ALBERT: 30 s)
  Seconds refresh_period = 30;    // republish at least this often
  bool client_mode = false;
  // A fetch merges the records of this many replicas (they may each have missed some stores).
  std::size_t fetch_responses = 2;
};

class ProgressTracker {
 public:
  using FetchCallback = std::function<void(const GlobalProgress&)>;

  // Throws std::invalid_argument on an empty run name, a target with neither a positive batch nor
  // a quota, or refresh_period not in (0, expiration).
  ProgressTracker(Environment& env, dht::DhtNode& dht, ProgressConfig config);
  ~ProgressTracker();
  ProgressTracker(const ProgressTracker&) = delete;
  ProgressTracker& operator=(const ProgressTracker&) = delete;

  // Records this peer's progress as of now and publishes it.
  void report(const LocalProgress& local);
  // Reads every peer's record from the DHT; `done` gets the estimate at the moment the answer
  // arrived (never inside this call). Our own latest report replaces whatever the DHT holds for us.
  void fetch(FetchCallback done);

  // The estimate at `now` from the records of the last fetch and our latest report; `group` as
  // aggregate() takes it (global_progress.h).
  GlobalProgress estimate(Seconds now, std::span<const PeerId> group = {}) const;
  // True when the next global step is expected within `matchmaking_time` of `now`.
  bool should_start_matchmaking(Seconds now, Seconds matchmaking_time) const;

  // `peer` is gone (an averaging round dropped it): its records published before now are left out
  // of others() and the estimate, so nobody waits for a dead peer until its record expires. A
  // record it publishes later (it was only slow, or it restarted) brings it back. Record times are
  // the reporters' clocks, so a restarted peer whose clock lags ours by more than its downtime
  // stays out until its clock passes this moment.
  void leave_out(PeerId peer);

  // Every other peer's record from the last fetch (who is at which step: state providers).
  const std::vector<PeerProgress>& others() const { return others_; }
  const std::string& key() const { return key_; }
  const ProgressConfig& config() const { return config_; }
  std::uint64_t malformed_records() const { return malformed_; }
  std::uint64_t publishes() const { return publishes_; }

 private:
  void publish();
  void arm_refresh();

  Environment& env_;
  dht::DhtNode& dht_;
  ProgressConfig config_;
  std::string key_;
  std::optional<PeerProgress> mine_;
  std::vector<PeerProgress> others_;  // the last fetch, without our own record or those left out
  Seconds read_at_ = std::numeric_limits<double>::infinity();  // when the last fetch returned
  std::map<PeerId, Seconds> left_out_;  // peer -> when it was left out (leave_out)
  bool store_in_flight_ = false;
  bool dirty_ = false;                 // a report arrived while a store was in flight
  Seconds last_expiration_ = 0;
  TimerHandle refresh_timer_ = 0;
  std::uint64_t malformed_ = 0;
  std::uint64_t publishes_ = 0;
  // DHT callbacks may outlive this object; they check this flag first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::progress
