#include "core/dmoe/expert_keeper.h"

#include <algorithm>
#include <stdexcept>

namespace swarmlab::core::dmoe {

ExpertKeeper::ExpertKeeper(Environment& env, dht::DhtNode& dht, ExpertRuntime& runtime, ExpertAnnouncer& announcer,
                           KeeperConfig config)
    : env_(env), dht_(dht), runtime_(runtime), announcer_(announcer), config_(config) {
  if (!(config_.checkpoint_period_s > 0) || !(config_.watch_period_s > 0) || !(config_.checkpoint_ttl_s > 0))
    throw std::invalid_argument("expert keeper: periods and ttl must be positive");
  if (config_.lapsed_checks == 0 || config_.check_responses == 0)
    throw std::invalid_argument("expert keeper: lapsed_checks and check_responses must be positive");
}

ExpertKeeper::~ExpertKeeper() {
  *alive_ = false;
  env_.cancel(checkpoint_timer_);
  env_.cancel(watch_timer_);
}

void ExpertKeeper::start(std::vector<ExpertUid> watched) {
  for (const ExpertUid& uid : watched)
    if (!runtime_.grid().contains(uid))
      throw std::invalid_argument("expert keeper: watched uid " + uid_text(uid) + " is outside the grid");
  watched_ = std::move(watched);
  checkpoint_timer_ = env_.schedule(config_.checkpoint_period_s, [this] { store_checkpoints(); });
  watch_timer_ = env_.schedule(config_.watch_period_s, [this] { check_watched(); });
}

void ExpertKeeper::store_checkpoints() {
  const std::uint64_t limit = dht_.config().max_value_bytes;
  for (const ExpertUid& uid : runtime_.experts()) {
    // The checkpoint of a sizes-only expert is empty: the record still says one exists.
    std::vector<std::uint8_t> bytes = runtime_.checkpoint(uid);
    if (bytes.size() > limit) {
      ++stats_.checkpoints_too_large;
      continue;
    }
    ++stats_.checkpoints_stored;
    dht_.store(checkpoint_key(runtime_.grid(), uid), std::move(bytes), env_.now() + config_.checkpoint_ttl_s,
               [](const dht::StoreResult&) {});
  }
  checkpoint_timer_ = env_.schedule(config_.checkpoint_period_s, [this] { store_checkpoints(); });
}

namespace {

// Whether some runtime's leaf entry lists this last coordinate.
bool hosted_anywhere(const dht::Record& leaf, std::uint32_t coordinate, std::uint32_t side) {
  for (const auto& [subkey, value] : leaf.dictionary()) {
    const auto coordinates = decode_coordinates(value.value, side);
    if (coordinates && std::binary_search(coordinates->begin(), coordinates->end(), coordinate)) return true;
  }
  return false;
}

}  // namespace

void ExpertKeeper::check_watched() {
  const ExpertGrid& grid = runtime_.grid();
  for (const ExpertUid& uid : watched_) {
    if (runtime_.hosts(uid) || std::find(taking_over_.begin(), taking_over_.end(), uid) != taking_over_.end()) continue;
    ++stats_.checks;
    const std::string parent = prefix_key(grid, std::span(uid).first(grid.dims - 1));
    dht::GetOptions options;
    options.sufficient_responses = config_.check_responses;
    dht_.get(parent, [this, alive = alive_, uid](std::optional<dht::Record> record, const dht::LookupStats&) {
      if (!*alive || runtime_.hosts(uid)) return;
      if (record && record->is_dictionary() && hosted_anywhere(*record, uid.back(), runtime_.grid().side)) {
        misses_[uid] = 0;
        return;
      }
      const auto seen = misses_.find(uid);
      if (seen == misses_.end()) return;  // never seen alive: its runtime may not have joined yet
      ++stats_.misses;
      if (++seen->second < config_.lapsed_checks) return;
      misses_.erase(seen);
      take_over(uid);
    }, options);
  }
  watch_timer_ = env_.schedule(config_.watch_period_s, [this] { check_watched(); });
}

void ExpertKeeper::take_over(const ExpertUid& uid) {
  taking_over_.push_back(uid);
  dht_.get(checkpoint_key(runtime_.grid(), uid), [this, alive = alive_, uid](std::optional<dht::Record> record,
                                                                              const dht::LookupStats&) {
    if (!*alive) return;
    std::erase(taking_over_, uid);
    if (runtime_.hosts(uid)) return;
    bool loaded = false;
    if (record && !record->is_dictionary()) {
      try {
        runtime_.host(uid, record->value().value);
        loaded = true;
        ++stats_.taken_over;
      } catch (const CheckpointError&) {
      }
    }
    if (!loaded) {
      runtime_.host(uid);
      ++stats_.restarted_fresh;
    }
    announcer_.announce_now();
  });
}

}  // namespace swarmlab::core::dmoe
