#include "core/dmoe/expert_announcer.h"

#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace swarmlab::core::dmoe {

ExpertAnnouncer::ExpertAnnouncer(Environment& env, dht::DhtNode& dht, ExpertGrid grid, AnnounceConfig config)
    : env_(env), dht_(dht), grid_(std::move(grid)), config_(config) {
  grid_.check();
  if (!(config_.period_s > 0) || !(config_.alive_for_s > config_.period_s))
    throw std::invalid_argument("expert announcer: need 0 < period_s < alive_for_s");
}

ExpertAnnouncer::~ExpertAnnouncer() {
  *alive_ = false;
  env_.cancel(timer_);
}

void ExpertAnnouncer::start(Experts experts) {
  experts_ = std::move(experts);
  stop();
  tick();
}

void ExpertAnnouncer::stop() {
  env_.cancel(timer_);
  timer_ = 0;
}

void ExpertAnnouncer::announce_now() {
  if (!experts_) return;
  ++stats_.rounds;
  // Distinct inner entries (key, next coordinate), and per leaf key the last coordinates hosted.
  std::map<std::pair<std::string, std::uint32_t>, bool> inner;
  std::map<std::string, std::set<std::uint32_t>> leaves;
  for (const ExpertUid& uid : experts_()) {
    if (!grid_.contains(uid)) continue;
    for (std::size_t level = 0; level + 1 < grid_.dims; ++level) inner[{prefix_key(grid_, std::span(uid).first(level)), uid[level]}] = true;
    leaves[prefix_key(grid_, std::span(uid).first(grid_.dims - 1))].insert(uid.back());
  }
  std::vector<std::tuple<std::string, std::vector<std::uint8_t>, std::vector<std::uint8_t>>> entries;
  for (const auto& [where, unused] : inner) entries.emplace_back(where.first, coordinate_subkey(where.second), std::vector<std::uint8_t>{});
  for (const auto& [key, coordinates] : leaves) {
    const std::vector<std::uint32_t> sorted(coordinates.begin(), coordinates.end());
    entries.emplace_back(key, encode_runtime(env_.self()), encode_coordinates(sorted));
  }
  const Seconds expiration = env_.now() + config_.alive_for_s;
  for (auto& [key, subkey, value] : entries) {
    ++stats_.stores;
    dht_.store(key, std::move(subkey), std::move(value), expiration,
               [this, alive = alive_](const dht::StoreResult& r) {
                 if (*alive && r.ok) ++stats_.stores_ok;
               });
  }
}

void ExpertAnnouncer::tick() {
  announce_now();
  timer_ = env_.schedule(config_.period_s, [this] { tick(); });
}

}  // namespace swarmlab::core::dmoe
