#pragma once
// A runtime's announcements (docs/learning-at-home.md §3, §7): every prefix of every hosted expert's
// uid, stored in the DHT with a timestamp, in the entries expert_grid.h lays out: one per inner
// prefix, and one per leaf key listing the runtime's experts under it. The expiration is the announcement time plus alive_for_s (the paper's t): a prefix is
// alive while some announcement of it is younger than t. Announcements repeat every period_s,
// shorter than t so that a live runtime's prefixes do not lapse while a store is under way.
#include <cstdint>
#include <functional>
#include <memory>

#include "core/dht/node.h"
#include "core/dmoe/expert_grid.h"
#include "core/env.h"

namespace swarmlab::core::dmoe {

struct AnnounceConfig {
  Seconds alive_for_s = 60;  // t
  Seconds period_s = 30;     // how often a runtime announces (< t)
};

struct AnnounceStats {
  std::uint64_t rounds = 0;     // announcement rounds
  std::uint64_t stores = 0;     // DHT stores issued (one per distinct inner prefix, one per leaf key)
  std::uint64_t stores_ok = 0;  // of which at least one replica accepted
};

class ExpertAnnouncer {
 public:
  using Experts = std::function<std::vector<ExpertUid>()>;

  ExpertAnnouncer(Environment& env, dht::DhtNode& dht, ExpertGrid grid, AnnounceConfig config = {});
  ~ExpertAnnouncer();
  ExpertAnnouncer(const ExpertAnnouncer&) = delete;
  ExpertAnnouncer& operator=(const ExpertAnnouncer&) = delete;

  // Announces what `experts` returns now and every period from now on.
  void start(Experts experts);
  // Announces at once, outside the period (an expert was just taken over).
  void announce_now();
  void stop();

  const AnnounceStats& stats() const { return stats_; }

 private:
  void tick();

  Environment& env_;
  dht::DhtNode& dht_;
  ExpertGrid grid_;
  AnnounceConfig config_;
  Experts experts_;
  TimerHandle timer_ = 0;
  AnnounceStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::dmoe
