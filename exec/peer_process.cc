#include "exec/peer_process.h"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <iomanip>
#include <memory>

#include <nlohmann/json.hpp>

#include "exec/event_loop.h"
#include "exec/gradient_values.h"
#include "exec/live_environment.h"
#include "exec/seeded_vector_learner.h"

namespace swarmlab::exec {
namespace {

using core::training::CollaborativePeer;

class PeerProcess {
 public:
  PeerProcess(const PeerConfig& cfg, std::ostream& out, std::ostream& log)
      : cfg_(cfg), out_(out), log_(log), loop_(cfg.clock_origin) {
    TcpTransport::Options t;
    t.self = cfg.id;
    t.addresses = cfg.addresses;
    t.bind = cfg.listen;
    t.network = cfg.network;
    t.connect_timeout_s = cfg.connect_timeout_s;
    t.congestion_control = cfg.congestion_control;
    t.log = [this](const std::string& line) {
      log_ << std::fixed << std::setprecision(3) << loop_.now() << " peer " << cfg_.id << ": " << line << "\n";
    };
    LiveEnvironmentOptions e;
    e.seed = cfg.seed;
    e.compute_sps = cfg.peer.capacity.compute_sps;
    e.pacing = cfg.pacing && cfg.pace_all_bps <= 0;
    e.trace_path = cfg.trace_path;
    env_ = std::make_unique<LiveEnvironment>(loop_, std::move(t), e);
  }

  int run() {
    core::training::PeerParts parts;
    parts.coordinator = std::make_unique<core::training::DhtCoordinator>(*env_, cfg_.coordination);
    auto learner = std::make_unique<SeededVectorLearner>(*env_, cfg_.seed, cfg_.parameters);
    learner_ = learner.get();
    parts.learner = std::move(learner);
    peer_ = std::make_unique<CollaborativePeer>(*env_, cfg_.peer, std::move(parts), events());
    env_->start();  // listen and dial, now that the peer receives
    if (cfg_.pace_all_bps > 0)
      for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p)
        if (p != cfg_.id) env_->transport().set_pacing(p, cfg_.pace_all_bps / 8.0);
    // The launch starts every process at once: join once connected to everyone reachable (or after
    // half the connect timeout), so the DHT bootstrap finds its peers listening and round 0 does
    // not measure connection setup.
    const double mesh_deadline = loop_.now() + cfg_.connect_timeout_s / 2;
    std::function<void()> join_when_meshed;
    join_when_meshed = [this, mesh_deadline, &join_when_meshed] {
      if (!mesh_ready() && loop_.now() < mesh_deadline) {
        loop_.schedule(0.02, join_when_meshed);
        return;
      }
      // Every peer that accepts connections can bootstrap the DHT; any of them answering is enough.
      std::vector<core::PeerId> bootstrap;
      for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p)
        if (p != cfg_.id && cfg_.addresses[p]) bootstrap.push_back(p);
      peer_->start(std::move(bootstrap));
    };
    join_when_meshed();
    arm_idle_timeout();
    loop_.run();
    write_exit_line();
    return ok_ && !abandoned_ ? 0 : 1;
  }

 private:
  bool mesh_ready() const {
    for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p) {
      if (p == cfg_.id || (!cfg_.addresses[p] && !cfg_.addresses[cfg_.id])) continue;  // two clients never connect
      if (!env_->transport().connected(p)) return false;
    }
    return true;
  }

  core::training::CollaborativePeerEvents events() {
    core::training::CollaborativePeerEvents e;
    e.round_started = [this](const core::averaging::RoundPlan& plan, std::uint64_t) { on_round_started(plan); };
    e.round_finished = [this](const core::averaging::RoundOutcome& o, std::uint64_t, std::uint64_t step) {
      on_round_done(o, step);
    };
    // A peer that sits rounds out (no role in them) still leaves after the last one.
    e.stepped = [this](std::uint64_t step) {
      arm_idle_timeout();
      if (step >= cfg_.rounds) finish();
    };
    return e;
  }

  void on_round_started(const core::averaging::RoundPlan& plan) {
    plan_ = plan;
    learner_->set_round(plan.round_id);
    const auto& s = env_->transport().stats();
    sent_at_start_ = s.bytes_sent;
    received_at_start_ = s.bytes_received;
    const std::uint64_t round = peer_->round_step() - 1;
    if (cfg_.die_round && *cfg_.die_round == round) loop_.schedule(cfg_.die_after_s, [] { raise(SIGKILL); });
  }

  void on_round_done(const core::averaging::RoundOutcome& o, std::uint64_t step) {
    const auto& s = env_->transport().stats();
    const std::uint64_t sent = s.bytes_sent - sent_at_start_;
    const std::uint64_t received = s.bytes_received - received_at_start_;
    const std::uint64_t round = step - 1;
    const auto plan = plan_;
    const std::vector<float> values = learner_->values();
    ++reports_pending_;  // the step event came first and may already be finishing: wait for this line
    // The check takes the loop for a while (many MB): first let this peer's queued messages -
    // averaged parts others still wait for - reach the kernel, so its work never lengthens anyone
    // else's round.
    after_drain(loop_.now() + cfg_.connect_timeout_s, [this, o, sent, received, round, plan, values] {
      report_round(o, sent, received, round, plan, values);
      --reports_pending_;
    });
  }

  void after_drain(double deadline, std::function<void()> then) {
    if (env_->transport().queued_bytes() == 0 || loop_.now() > deadline) {
      loop_.schedule(0, std::move(then));
      return;
    }
    loop_.schedule(0.002, [this, deadline, then = std::move(then)]() mutable { after_drain(deadline, std::move(then)); });
  }

  void report_round(const core::averaging::RoundOutcome& o, std::uint64_t sent, std::uint64_t received,
                    std::uint64_t round, const core::averaging::RoundPlan& plan, const std::vector<float>& values) {
    const auto me = plan.index_of(cfg_.id);
    const bool sends = me && plan.sends(*me);
    const bool clean = o.dropped_senders.empty() && o.dropped_reducers.empty();
    AverageCheck check;
    const double tolerance = codec_tolerance(plan.codec);
    if (sends) {
      std::uint64_t stride = cfg_.check_stride;
      if (stride == 0) stride = std::max<std::uint64_t>(1, cfg_.parameters >> 20);
      check = check_average(plan, cfg_.seed, values, stride, o.round_id % stride);
    }
    // When any member dropped a peer there is no single exact average to compare with, and a
    // member cannot tell from here whether others did (a reducer that dropped a sender returns
    // averages without it): values_ok is the plain comparison, "clean" says whether this member
    // dropped anyone, and the launcher, which sees every member, judges the round.
    const bool values_ok = !sends || check.max_abs_error <= tolerance;
    if (!o.completed) ok_ = false;
    ++rounds_run_;

    nlohmann::ordered_json j;
    j["peer"] = cfg_.id;
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
      log_ << "peer " << cfg_.id << ": round " << round << " max error " << check.max_abs_error
           << " exceeds the tolerance " << tolerance << "\n";
  }

  void arm_idle_timeout() {
    loop_.cancel(idle_timer_);
    idle_timer_ = loop_.schedule(cfg_.idle_timeout_s, [this] {
      idle_timer_ = 0;
      log_ << "peer " << cfg_.id << ": no round ended for " << cfg_.idle_timeout_s << " s; giving up\n";
      abandoned_ = true;
      finish();
    });
  }

  void finish() {
    if (finishing_) return;
    finishing_ = true;
    loop_.cancel(idle_timer_);
    // Let queued messages (the last averaged parts) reach the kernel, then stay a moment so peers
    // read them before our sockets close.
    // From the loop, not here: the step event that calls this comes before the round's outcome,
    // whose report must still be written.
    const double deadline = loop_.now() + cfg_.connect_timeout_s + 1;
    loop_.schedule(0, [this, deadline] { drain(deadline); });
  }

  void drain(double deadline) {
    if ((env_->transport().queued_bytes() == 0 && reports_pending_ == 0) || loop_.now() > deadline) {
      loop_.schedule(0.1, [this] { loop_.stop(); });
      return;
    }
    loop_.schedule(0.01, [this, deadline] { drain(deadline); });
  }

  void write_exit_line() {
    nlohmann::ordered_json exit_line;
    const auto& s = env_->transport().stats();
    exit_line["peer"] = cfg_.id;
    exit_line["event"] = "exit";
    exit_line["ok"] = ok_;
    exit_line["rounds_run"] = rounds_run_;
    exit_line["abandoned"] = abandoned_;
    exit_line["step"] = peer_ ? peer_->step() : 0;
    exit_line["bytes_sent"] = s.bytes_sent;
    exit_line["bytes_received"] = s.bytes_received;
    exit_line["rejected_connections"] = s.rejected_connections;
    exit_line["link_failures"] = s.link_failures;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    exit_line["cpu_user_s"] = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec * 1e-6;
    exit_line["cpu_system_s"] = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec * 1e-6;
    out_ << exit_line.dump() << std::endl;
  }

  const PeerConfig& cfg_;
  std::ostream& out_;
  std::ostream& log_;
  EventLoop loop_;
  std::unique_ptr<LiveEnvironment> env_;
  std::unique_ptr<CollaborativePeer> peer_;
  SeededVectorLearner* learner_ = nullptr;
  core::averaging::RoundPlan plan_;
  EventLoop::TimerId idle_timer_ = 0;
  std::uint64_t sent_at_start_ = 0, received_at_start_ = 0;
  std::uint64_t rounds_run_ = 0;
  std::size_t reports_pending_ = 0;
  bool ok_ = true;
  bool abandoned_ = false;
  bool finishing_ = false;
};

}  // namespace

int run_peer(const PeerConfig& config, std::ostream& out, std::ostream& log) {
  if (config.id >= config.addresses.size())
    throw std::invalid_argument("peer " + std::to_string(config.id) + " is not in the peer list");
  if (config.parameters == 0) throw std::invalid_argument("the vector to average is empty (parameters = 0)");
  PeerProcess peer(config, out, log);
  return peer.run();
}

}  // namespace swarmlab::exec
