#include "exec/peer_process.h"

#include <signal.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/gradient_values.h"
#include "exec/seeded_vector_learner.h"

namespace swarmlab::exec {
namespace {

using core::training::CollaborativePeer;

class PeerProcess {
 public:
  PeerProcess(const PeerConfig& cfg, std::ostream& out, std::ostream& log) : cfg_(cfg), out_(out), host_(cfg.host, log) {}

  int run() {
    core::training::PeerParts parts;
    core::training::DhtCoordinatorConfig coordination = cfg_.coordination;
    coordination.matchmaking.log = [this](const std::string& line) { host_.log(line); };
    parts.coordinator = std::make_unique<core::training::DhtCoordinator>(host_.peer_env(), std::move(coordination));
    auto learner = std::make_unique<SeededVectorLearner>(host_.peer_env(), cfg_.host.seed, cfg_.parameters);
    learner_ = learner.get();
    parts.learner = std::move(learner);
    peer_ = std::make_unique<CollaborativePeer>(host_.peer_env(), cfg_.peer, std::move(parts), events());
    host_.start(*peer_);
    const bool abandoned = host_.run();
    write_exit_line();
    return ok_ && !abandoned ? 0 : 1;
  }

 private:
  core::training::CollaborativePeerEvents events() {
    core::training::CollaborativePeerEvents e;
    // The log traces the schedule's decisions, one line each: when a live run stalls, it says
    // where each peer was.
    e.grouped = [this](const core::matchmaking::Group& group, std::uint64_t step) {
      host_.log("grouped for step " + std::to_string(step) + " in group " + std::to_string(group.group_id) + " with " +
                peer_list(group.peers()));
    };
    e.round_started = [this](const core::averaging::RoundPlan& plan, std::uint64_t) { on_round_started(plan); };
    e.round_finished = [this](const core::averaging::RoundOutcome& o, std::uint64_t, std::uint64_t step) {
      host_.log("round " + std::to_string(o.round_id) + " ended at step " + std::to_string(step) +
                (o.completed ? "" : " (timed out)") + "; dropped senders " + peer_list(o.dropped_senders) +
                ", dropped reducers " + peer_list(o.dropped_reducers));
      on_round_done(o, step);
    };
    e.sync_started = [this](core::PeerId provider) { host_.log("state download from peer " + std::to_string(provider)); };
    e.sync_finished = [this](bool ok, std::uint64_t step, bool) {
      host_.log(std::string("state download ") + (ok ? "done" : "failed") + " at step " + std::to_string(step));
    };
    // A peer that sits rounds out (no role in them) still leaves after the last one.
    e.stepped = [this](std::uint64_t step) {
      host_.keep_alive();
      if (step >= cfg_.rounds) host_.finish();
    };
    return e;
  }

  static std::string peer_list(const std::vector<core::PeerId>& peers) {
    std::string s = "[";
    for (const core::PeerId p : peers) {
      if (s.size() > 1) s += ' ';
      s += std::to_string(p);
    }
    return s + "]";
  }

  void on_round_started(const core::averaging::RoundPlan& plan) {
    host_.log("round " + std::to_string(plan.round_id) + " begins with " + peer_list(plan.members));
    plan_ = plan;
    learner_->set_round(plan.round_id);
    const auto& s = host_.env().transport().stats();
    sent_at_start_ = s.bytes_sent;
    received_at_start_ = s.bytes_received;
    const std::uint64_t round = peer_->round_step() - 1;
    if (cfg_.die_round && *cfg_.die_round == round)
      host_.loop().schedule(cfg_.die_after_s, [silent = cfg_.die_silently] { raise(silent ? SIGSTOP : SIGKILL); });
  }

  void on_round_done(const core::averaging::RoundOutcome& o, std::uint64_t step) {
    const auto& s = host_.env().transport().stats();
    const std::uint64_t sent = s.bytes_sent - sent_at_start_;
    const std::uint64_t received = s.bytes_received - received_at_start_;
    const std::uint64_t round = step - 1;
    const auto plan = plan_;
    const std::vector<float> values = learner_->values();
    host_.hold();  // the step event came first and may already be finishing: wait for this line
    // The check takes the loop for a while (many MB): first let this peer's queued messages -
    // averaged parts others still wait for - reach the kernel, so its work never lengthens anyone
    // else's round.
    host_.after_drain(host_.now() + cfg_.host.connect_timeout_s, [this, o, sent, received, round, plan, values] {
      report_round(o, sent, received, round, plan, values);
      host_.release();
    });
  }

  void report_round(const core::averaging::RoundOutcome& o, std::uint64_t sent, std::uint64_t received,
                    std::uint64_t round, const core::averaging::RoundPlan& plan, const std::vector<float>& values) {
    const auto me = plan.index_of(cfg_.host.id);
    const bool sends = me && plan.sends(*me);
    const bool clean = o.dropped_senders.empty() && o.dropped_reducers.empty();
    AverageCheck check;
    const double tolerance = codec_tolerance(plan.codec);
    if (sends) {
      std::uint64_t stride = cfg_.check_stride;
      if (stride == 0) stride = std::max<std::uint64_t>(1, cfg_.parameters >> 20);
      check = check_average(plan, cfg_.host.seed, values, stride, o.round_id % stride);
    }
    // When any member dropped a peer there is no single exact average to compare with, and a
    // member cannot tell from here whether others did (a reducer that dropped a sender returns
    // averages without it): values_ok is the plain comparison, "clean" says whether this member
    // dropped anyone, and the launcher, which sees every member, judges the round.
    const bool values_ok = !sends || check.max_abs_error <= tolerance;
    if (!o.completed) ok_ = false;
    ++rounds_run_;

    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["round"] = round;
    j["member"] = true;
    j["sends"] = sends;
    j["participants"] = plan.size();
    j["start_s"] = o.started;
    j["end_s"] = o.finished;
    j["duration_s"] = o.finished - o.started;
    j["completed"] = o.completed;
    j["fraction_averaged"] = o.fraction_averaged;
    j["max_abs_error"] = check.max_abs_error;
    j["checked_elements"] = check.checked;
    j["tolerance"] = tolerance;
    j["values_ok"] = values_ok;
    j["clean"] = clean;
    j["dropped_senders"] = o.dropped_senders;
    j["dropped_reducers"] = o.dropped_reducers;
    j["bytes_sent"] = sent;
    j["bytes_received"] = received;
    out_ << j.dump() << std::endl;
    if (!values_ok && clean)
      host_.log("round " + std::to_string(round) + " max error " + std::to_string(check.max_abs_error) +
                " exceeds the tolerance " + std::to_string(tolerance));
  }

  void write_exit_line() {
    nlohmann::ordered_json exit_line;
    exit_line["peer"] = cfg_.host.id;
    exit_line["event"] = "exit";
    exit_line["ok"] = ok_;
    exit_line["rounds_run"] = rounds_run_;
    exit_line["step"] = peer_ ? peer_->step() : 0;
    host_.add_exit_counters(exit_line);
    out_ << exit_line.dump() << std::endl;
  }

  const PeerConfig& cfg_;
  std::ostream& out_;
  LiveHost host_;
  std::unique_ptr<CollaborativePeer> peer_;
  SeededVectorLearner* learner_ = nullptr;
  core::averaging::RoundPlan plan_;
  std::uint64_t sent_at_start_ = 0, received_at_start_ = 0;
  std::uint64_t rounds_run_ = 0;
  bool ok_ = true;
};

}  // namespace

int run_peer(const PeerConfig& config, std::ostream& out, std::ostream& log) {
  if (config.host.id >= config.host.addresses.size())
    throw std::invalid_argument("peer " + std::to_string(config.host.id) + " is not in the peer list");
  if (config.parameters == 0) throw std::invalid_argument("the vector to average is empty (parameters = 0)");
  PeerProcess peer(config, out, log);
  return peer.run();
}

}  // namespace swarmlab::exec
