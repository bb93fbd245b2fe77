#include "exec/round_coordinator.h"

namespace swarmlab::exec {

RoundCoordinator::RoundCoordinator(core::Environment& env, Options options, Deliver deliver)
    : env_(env), options_(options), deliver_(std::move(deliver)) {
  incarnation_.assign(options_.peers, std::nullopt);
  assigned_.assign(options_.peers, -1);
  busy_.assign(options_.peers, false);
}

RoundCoordinator::~RoundCoordinator() {
  env_.cancel(timer_);
  env_.cancel(busy_timer_);
}

void RoundCoordinator::on_link_failure(core::PeerId peer) {
  if (finished_ || peer >= options_.peers || !busy_[peer]) return;
  busy_[peer] = false;
  maybe_start();
}

void RoundCoordinator::on_ready(core::PeerId from, const ReadyMsg& ready) {
  if (finished_ || from >= options_.peers) return;
  if (incarnation_[from] != ready.incarnation) {  // a new process for this identity
    incarnation_[from] = ready.incarnation;
    assigned_[from] = -1;
  }
  if (static_cast<std::int64_t>(ready.next_round) <= assigned_[from]) return;  // stale
  ready_[from] = ready.announce;
  busy_[from] = false;
  maybe_start();
}

void RoundCoordinator::maybe_start() {
  if (finished_) return;
  if (ready_.size() == options_.peers) {
    start_now();
    return;
  }
  for (core::PeerId p = 0; p < options_.peers; ++p)
    if (busy_[p]) return;  // the previous round is still running somewhere: wait for it
  if (timer_ || ready_.empty()) return;
  const double wait = next_round_ == 0 ? options_.startup_timeout_s : options_.barrier_timeout_s;
  timer_ = env_.schedule(wait, [this] {
    timer_ = 0;
    bool sender = false;
    for (const auto& [peer, a] : ready_) sender |= a.compute_sps > 0;
    if (sender || next_round_ >= options_.rounds) start_now();
    else maybe_start();  // nobody with a gradient yet: keep waiting
  });
}

void RoundCoordinator::start_now() {
  env_.cancel(timer_);
  timer_ = 0;
  if (next_round_ >= options_.rounds) {
    finished_ = true;
    env_.cancel(busy_timer_);
    busy_timer_ = 0;
    // Everyone, not only the ready: a peer still busy (or restarting) must stop too.
    for (core::PeerId p = 0; p < options_.peers; ++p) deliver_(p, DoneMsg{});
    return;
  }
  StartMsg start;
  start.round = next_round_;
  for (const auto& [peer, a] : ready_) {
    start.members.emplace_back(peer, a);
    assigned_[peer] = static_cast<std::int64_t>(next_round_);
  }
  ready_.clear();
  ++next_round_;
  for (const auto& [peer, a] : start.members) busy_[peer] = true;
  env_.cancel(busy_timer_);
  busy_timer_ = env_.schedule(options_.busy_timeout_s, [this] {
    busy_timer_ = 0;
    busy_.assign(options_.peers, false);  // a peer hung in its round: stop waiting for it
    maybe_start();
  });
  for (const auto& [peer, a] : start.members) deliver_(peer, start);
}

}  // namespace swarmlab::exec
