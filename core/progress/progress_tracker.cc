#include "core/progress/progress_tracker.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::progress {

ProgressTracker::ProgressTracker(Environment& env, dht::DhtNode& dht, ProgressConfig config)
    : env_(env), dht_(dht), config_(std::move(config)), key_(config_.run + "_progress") {
  if (config_.run.empty()) throw std::invalid_argument("progress tracker: empty run name");
  if (!(config_.target.batch > 0) && config_.target.per_peer_quota == 0)
    throw std::invalid_argument("progress tracker: the target needs a positive batch or a per-peer quota");
  if (!(config_.refresh_period > 0) || !(config_.refresh_period < config_.expiration))
    throw std::invalid_argument("progress tracker: need 0 < refresh_period < expiration");
}

ProgressTracker::~ProgressTracker() {
  *alive_ = false;
  env_.cancel(refresh_timer_);
}

void ProgressTracker::report(const LocalProgress& local) {
  mine_ = PeerProgress{env_.self(), local.step, local.samples, local.samples_per_s, env_.now(), config_.client_mode, local.lineage};
  publish();
}

void ProgressTracker::publish() {
  if (!mine_) return;
  if (store_in_flight_) {
    dirty_ = true;
    return;
  }
  store_in_flight_ = true;
  dirty_ = false;
  // The DHT keeps the version with the later expiration and the older one on a tie, so two
  // publishes at the same instant must still have increasing expirations.
  Seconds expiration = env_.now() + config_.expiration;
  if (expiration <= last_expiration_) expiration = std::nextafter(last_expiration_, std::numeric_limits<double>::infinity());
  last_expiration_ = expiration;
  ++publishes_;
  dht_.store(key_, peer_subkey(env_.self()), encode_progress(*mine_), expiration,
             [this, alive = alive_](const dht::StoreResult&) {
               if (!*alive) return;
               store_in_flight_ = false;
               if (dirty_) publish();
             });
  arm_refresh();
}

void ProgressTracker::arm_refresh() {
  env_.cancel(refresh_timer_);
  refresh_timer_ = env_.schedule(config_.refresh_period, [this] {
    refresh_timer_ = 0;
    publish();
  });
}

void ProgressTracker::leave_out(PeerId peer) {
  left_out_[peer] = env_.now();
  std::erase_if(others_, [&](const PeerProgress& p) { return p.peer == peer && p.time < left_out_[peer]; });
}

void ProgressTracker::fetch(FetchCallback done) {
  dht::GetOptions options;
  options.sufficient_responses = config_.fetch_responses;
  dht_.get(
      key_,
      [this, alive = alive_, done = std::move(done)](std::optional<dht::Record> record, const dht::LookupStats&) {
        if (!*alive) return;
        others_.clear();
        read_at_ = env_.now();
        // Every record published before a peer was left out has expired by now + expiration.
        std::erase_if(left_out_, [&](const auto& e) { return env_.now() - e.second > config_.expiration; });
        if (record && record->is_dictionary()) {
          for (const auto& [subkey, timed] : record->dictionary()) {
            try {
              PeerProgress p = decode_progress(timed.value);
              // The subkey names who wrote it; a record claiming another identity is forged or corrupt.
              if (peer_subkey(p.peer) != subkey) throw DecodeError("progress: subkey does not match peer");
              const auto left = left_out_.find(p.peer);
              if (p.peer != env_.self() && (left == left_out_.end() || p.time >= left->second)) others_.push_back(p);
            } catch (const DecodeError&) {
              ++malformed_;
            }
          }
        }
        done(estimate(env_.now()));
      },
      options);
}

GlobalProgress ProgressTracker::estimate(Seconds now, std::span<const PeerId> group) const {
  std::vector<PeerProgress> all = others_;
  if (mine_) all.push_back(*mine_);
  return aggregate(all, now, config_.target, mine_ ? mine_->step : 0, group, read_at_);
}

bool ProgressTracker::should_start_matchmaking(Seconds now, Seconds matchmaking_time) const {
  return estimate(now).eta_s <= matchmaking_time;
}

}  // namespace swarmlab::core::progress
