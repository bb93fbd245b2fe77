#include "sim/experiments/averaging_experiment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/codec/codec.h"
#include "core/rng.h"
#include "sim/scenario/swarm.h"

namespace swarmlab::sim {

using core::averaging::RoundOutcome;
using core::averaging::RoundPlan;
using core::training::CollaborativePeer;

namespace {

class AveragingRun {
 public:
  AveragingRun(const scenarios::Scenario& sc, const AveragingRunConfig& cfg) : sc_(sc), cfg_(cfg) {
    SwarmOptions o;
    o.backend = cfg.backend;
    o.transport = cfg.transport;
    o.coordination = cfg.coordination;
    o.averaging_only = true;
    o.strategy = cfg.strategy;
    o.trace = cfg.trace;
    o.replay_rounds = cfg.replay_rounds && !fails_on_purpose();
    if (cfg.carry_values) o.values = [this](PeerId i) { return values_for(i); };
    swarm_ = std::make_unique<SimSwarm>(sc, o, hooks());
    swarm_->world().set_delivery_observer([this](PeerId from, PeerId, const core::Message&) { on_delivered(from); });
    victims_.assign(sc.peers.size(), Victim{});
    values_.resize(sc.peers.size());
    averaged_.resize(sc.peers.size());
  }

  AveragingRunResult run() {
    result_.scenario = sc_.name;
    result_.strategy = std::string(core::averaging::label(cfg_.strategy));
    result_.backend = cfg_.backend;
    result_.payload_bytes_per_round = core::codec::encoded_size(sc_.workload.wire_precision, sc_.workload.parameters);
    swarm_->start();
    arm_watchdog();
    swarm_->engine().run();
    double sum = 0;
    for (const auto& r : result_.rounds) sum += r.duration_s;
    result_.mean_round_s = result_.rounds.empty() ? 0 : sum / static_cast<double>(result_.rounds.size());
    for (PeerId i = 0; i < n(); ++i) result_.bytes_sent.push_back(swarm_->world().bytes_sent(i));
    result_.events = swarm_->engine().events_processed();
    return std::move(result_);
  }

 private:
  struct Victim {
    bool armed = false;
    std::uint64_t threshold = 0;  // leave after this many delivered messages
    std::uint64_t delivered = 0;
    SimWorld::Departure how = SimWorld::Departure::Crash;
  };
  struct Member {
    bool sends = false;
    bool started = false;
    bool done = false;
    std::uint64_t group = 0;  // its group's round id
  };

  PeerId n() const { return static_cast<PeerId>(sc_.peers.size()); }
  Seconds now() { return swarm_->engine().now(); }

  bool fails_on_purpose() const {
    if (!cfg_.failures.empty() || !sc_.failures.empty()) return true;
    return std::any_of(sc_.peers.begin(), sc_.peers.end(), [](const auto& p) { return p.failure_rate > 0; });
  }

  SwarmHooks hooks() {
    SwarmHooks h;
    h.round_started = [this](PeerId i, const RoundPlan& plan, std::uint64_t) { on_round_started(i, plan); };
    h.round_finished = [this](PeerId i, const RoundOutcome& o, std::uint64_t, std::uint64_t) { on_member_done(i, &o); };
    h.going_down = [this](PeerId i, const CollaborativePeer&) {
      victims_[i].armed = false;
      const auto it = members_.find(i);
      if (it != members_.end() && !it->second.done) {
        ++record_.failures;
        on_member_done(i, nullptr);
      }
    };
    return h;
  }

  // ------------------------------------------------------------------------------------------
  // Rounds: round r is every group that produces global step r + 1.

  void on_round_started(PeerId i, const RoundPlan& plan) {
    const std::uint64_t step = swarm_->peer(i)->round_step();
    if (step < 1 || step - 1 < round_ || (step - 1 == round_ && closed_)) return;  // a straggler of an older round
    if (step - 1 > round_ || !open_) open_round(static_cast<std::uint32_t>(step - 1));
    if (!groups_.count(plan.round_id)) add_group(plan);
    Member& m = members_[i];
    m.started = true;
    plans_[i] = plan;
  }

  void open_round(std::uint32_t round) {
    if (open_ && !closed_) finish_round();  // the next step began: whatever is missing is not coming
    round_ = round;
    open_ = true;
    closed_ = false;
    record_ = RoundRecord{};
    record_.round = round;
    record_.started_s = now();
    record_.groups = 0;
    members_.clear();
    groups_.clear();
    fractions_.clear();
    plans_.clear();
    outstanding_ = 0;
  }

  // A group of this round: its members (those that send or reduce) are expected to finish it.
  void add_group(const RoundPlan& plan) {
    groups_.insert(plan.round_id);
    ++record_.groups;
    for (std::size_t k = 0; k < plan.size(); ++k) {
      const PeerId p = plan.members[k];
      if (members_.count(p)) continue;
      members_[p] = Member{plan.sends(k), false, false, plan.round_id};
      ++outstanding_;
      ++record_.participants;
    }
    if (result_.roles.weights.empty()) report_roles(plan);
    arm_failures(plan);
  }

  // The roles of the first round, indexed by scenario peer.
  void report_roles(const RoundPlan& plan) {
    result_.roles.weights.assign(n(), 0.0);
    result_.roles.fractions.assign(n(), 0.0);
    const double length = static_cast<double>(plan.length());
    for (std::size_t k = 0; k < plan.size(); ++k) {
      result_.roles.weights[plan.members[k]] = plan.sends(k) ? 1.0 : 0.0;
      result_.roles.fractions[plan.members[k]] = static_cast<double>(plan.span_length(k)) / length;
    }
    if (cfg_.strategy == core::averaging::Strategy::ParameterServer)
      for (std::size_t k = 0; k < plan.size(); ++k)
        if (plan.span_length(k) == plan.length()) result_.roles.server = plan.members[k];
  }

  void on_member_done(PeerId i, const RoundOutcome* o) {
    const auto it = members_.find(i);
    if (closed_ || it == members_.end() || it->second.done) return;
    it->second.done = true;
    if (o) {
      record_.duration_s = std::max(record_.duration_s, o->finished - record_.started_s);
      if (!o->completed) ++record_.incomplete;
      if (it->second.sends) fractions_.push_back(o->fraction_averaged);
    }
    if (--outstanding_ == 0) finish_round();
  }

  void finish_round() {
    closed_ = true;
    if (!fractions_.empty()) {
      record_.min_fraction_averaged = *std::min_element(fractions_.begin(), fractions_.end());
      double sum = 0;
      for (double f : fractions_) sum += f;
      record_.mean_fraction_averaged = sum / static_cast<double>(fractions_.size());
    }
    if (cfg_.carry_values && record_.failures == 0) record_.max_abs_error = value_error();
    result_.rounds.push_back(record_);
    ++completed_;
    if (cfg_.on_round) cfg_.on_round(round_ + 1, cfg_.rounds);
    // Peers that failed during the round restart for the next one.
    for (PeerId p : rejoin_)
      if (sc_.peer_up(p, now())) swarm_->bring_up(p);
    rejoin_.clear();
    if (round_ + 1 >= cfg_.rounds) swarm_->engine().stop();  // later churn is irrelevant to the measurement
  }

  // Nothing can average any more (no computing peer up, no one left to join): stop.
  void arm_watchdog() {
    swarm_->engine().after(60, [this] {
      const bool sender_up = [&] {
        for (PeerId i = 0; i < n(); ++i)
          if (swarm_->is_up(i) && sc_.peers[i].compute_sps > 0) return true;
        return false;
      }();
      const double last_event = last_availability_event();
      if (completed_ == completed_at_watch_ && !sender_up && now() > last_event) {
        swarm_->engine().stop();
        return;
      }
      completed_at_watch_ = completed_;
      arm_watchdog();
    });
  }

  double last_availability_event() const {
    double last = 0;
    for (const auto& p : sc_.peers) {
      if (p.join_s) last = std::max(last, *p.join_s);
      if (p.leave_s) last = std::max(last, *p.leave_s);
    }
    for (const auto& e : sc_.churn.events) last = std::max(last, e.time_s);
    return last;
  }

  // ------------------------------------------------------------------------------------------
  // Failures

  void take_down(PeerId i, SimWorld::Departure how) {
    if (!swarm_->is_up(i)) return;
    swarm_->take_down(i, how);
  }

  // Messages member `m` sends in a round: its parts of every other span, and its averaged parts
  // to every other sender.
  static std::uint64_t messages_sent(const RoundPlan& plan, std::size_t m) {
    std::uint64_t count = 0;
    if (plan.sends(m))
      for (std::size_t j = 0; j < plan.size(); ++j)
        if (j != m) count += plan.parts_in_span(j);
    const std::size_t other_senders = plan.sender_count() - (plan.sends(m) ? 1 : 0);
    return count + static_cast<std::uint64_t>(plan.parts_in_span(m)) * other_senders;
  }

  void arm_failures(const RoundPlan& plan) {
    std::vector<InjectedFailure> now_failing;
    if (!armed_round_ || *armed_round_ != round_) {  // the injected failures once per round
      armed_round_ = round_;
      for (const auto& f : cfg_.failures)
        if (f.round == round_) now_failing.push_back(f);
      for (const auto& f : sc_.failures)
        if (f.round == round_)
          now_failing.push_back({static_cast<PeerId>(f.peer), f.round, f.after_fraction.value_or(-1), f.at_s.value_or(-1),
                                 f.silent ? SimWorld::Departure::Silent : SimWorld::Departure::Crash, true});
    }
    // The scenario's per-round failure probability: a random point of the member's round.
    for (const PeerId peer : plan.members) {
      const double p = sc_.peers[peer].failure_rate;
      if (p > 0 && failure_rng_.bernoulli(p)) {
        InjectedFailure f;
        f.peer = peer;
        f.round = round_;
        f.after_fraction = failure_rng_.uniform();
        now_failing.push_back(f);
      }
    }
    for (const auto& f : now_failing) {
      if (!plan.index_of(f.peer)) {
        if (members_.count(f.peer) == 0) deferred_.push_back(f);  // its group has not started yet
        continue;
      }
      arm(f);
    }
    // Failures for members of groups that start later in this round.
    std::vector<InjectedFailure> still;
    for (const auto& f : deferred_) {
      if (f.round != round_) continue;
      if (plan.index_of(f.peer)) arm(f);
      else still.push_back(f);
    }
    deferred_ = std::move(still);
    // Members start their sides right after the group forms; thresholds follow from their plans.
    swarm_->engine().after(0, [this] { set_thresholds(); });
  }

  void arm(const InjectedFailure& f) {
    if (f.rejoin_next_round) rejoin_.push_back(f.peer);
    if (f.after_fraction >= 0) {
      Victim& v = victims_[f.peer];
      v.armed = true;
      v.delivered = 0;
      v.how = f.how;
      pending_fraction_[f.peer] = f.after_fraction;  // the threshold needs the member's plan
    } else {
      swarm_->engine().after(std::max(0.0, f.at_s), [this, peer = f.peer, how = f.how] { take_down(peer, how); });
    }
  }

  void set_thresholds() {
    for (const auto& [peer, fraction] : pending_fraction_) {
      Victim& v = victims_[peer];
      const auto plan = plans_.find(peer);
      if (!v.armed || plan == plans_.end()) continue;
      const auto m = plan->second.index_of(peer);
      v.threshold = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(messages_sent(plan->second, *m))));
      if (v.threshold <= v.delivered) {
        v.armed = false;
        swarm_->engine().after(0, [this, peer = peer, how = v.how] { take_down(peer, how); });
      }
    }
    pending_fraction_.clear();
  }

  void on_delivered(PeerId from) {
    Victim& v = victims_[from];
    if (!v.armed || pending_fraction_.count(from) || ++v.delivered < v.threshold) return;
    v.armed = false;
    // Not from inside the network's callback: the failure happens right after this delivery.
    swarm_->engine().after(0, [this, from, how = v.how] { take_down(from, how); });
  }

  // ------------------------------------------------------------------------------------------
  // Values

  std::optional<VirtualLearnerOptions::Values> values_for(PeerId i) {
    VirtualLearnerOptions::Values v;
    v.fill = [this, i](std::span<float> out) {
      auto& mine = values_[i];
      mine.resize(out.size());
      for (auto& x : mine) x = static_cast<float>(value_rng_.normal());
      std::copy(mine.begin(), mine.end(), out.begin());
    };
    v.averaged = [this, i](std::span<const float> in) { averaged_[i].assign(in.begin(), in.end()); };
    return v;
  }

  // Max |x − exact average| over the senders of every group: each group averages its own senders'
  // vectors, all with weight 1.
  double value_error() {
    double worst = 0;
    std::map<std::uint64_t, std::vector<PeerId>> senders;
    for (const auto& [peer, m] : members_)
      if (m.sends) senders[m.group].push_back(peer);
    for (const auto& [g, peers] : senders) {
      const std::size_t length = values_[peers.front()].size();
      std::vector<double> expected(length, 0.0);
      for (PeerId p : peers)
        for (std::size_t k = 0; k < length; ++k) expected[k] += values_[p][k];
      for (auto& e : expected) e /= static_cast<double>(peers.size());
      for (PeerId p : peers)
        for (std::size_t k = 0; k < length && k < averaged_[p].size(); ++k)
          worst = std::max(worst, std::abs(averaged_[p][k] - expected[k]));
    }
    return worst;
  }

  const scenarios::Scenario& sc_;
  const AveragingRunConfig& cfg_;
  std::unique_ptr<SimSwarm> swarm_;
  AveragingRunResult result_;
  std::uint32_t round_ = 0;
  std::uint64_t completed_ = 0, completed_at_watch_ = ~0ull;
  RoundRecord record_;
  bool open_ = false, closed_ = false;      // a round has begun / it has been recorded
  std::map<PeerId, Member> members_;        // of the round in flight
  std::set<std::uint64_t> groups_;          // its groups' round ids
  std::map<PeerId, RoundPlan> plans_;
  std::size_t outstanding_ = 0;
  std::optional<std::uint32_t> armed_round_;
  std::vector<InjectedFailure> deferred_;
  std::vector<double> fractions_;
  std::vector<PeerId> rejoin_;
  std::vector<Victim> victims_;
  std::map<PeerId, double> pending_fraction_;
  std::vector<std::vector<float>> values_, averaged_;
  core::Rng value_rng_{sc_.seed, 0xA11};
  core::Rng failure_rng_{sc_.seed, 0xFA11};
};

}  // namespace

AveragingRunResult run_averaging(const scenarios::Scenario& scenario, const AveragingRunConfig& config) {
  if (config.rounds == 0) throw std::invalid_argument("rounds must be >= 1");
  AveragingRun run(scenario, config);
  return run.run();
}

}  // namespace swarmlab::sim
