#include "core/tracker/leader_reporter.h"

#include <stdexcept>
#include <utility>

namespace swarmlab::core::tracker {

LeaderReporter::LeaderReporter(Environment& env, BootstrapClient& client, std::string title, std::uint64_t generation,
                               Seconds refresh)
    : env_(env), client_(client), title_(std::move(title)), generation_(generation), refresh_(refresh) {
  if (!(refresh_ > 0)) throw std::invalid_argument("leader reporter: refresh must be positive");
}

LeaderReporter::~LeaderReporter() {
  *alive_ = false;
  env_.cancel(timer_);
}

void LeaderReporter::on_role(raft::Role role, raft::Term term) {
  env_.cancel(timer_);
  timer_ = 0;
  if (role != raft::Role::Leader) {
    leading_.reset();
    return;
  }
  leading_ = term;
  report();
}

void LeaderReporter::report() {
  ++reports_;
  client_.report_leader(title_, generation_, *leading_, [this, alive = alive_](std::optional<bool> ok) {
    if (*alive && ok && *ok) ++accepted_;
  });
  timer_ = env_.schedule(refresh_, [this] {
    timer_ = 0;
    if (leading_) report();
  });
}

}  // namespace swarmlab::core::tracker
