#include "exec/peer_process.h"

#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/averaging/averaging_service.h"
#include "core/service_mux.h"
#include "core/wire.h"
#include "exec/event_loop.h"
#include "exec/gradient_values.h"
#include "exec/live_environment.h"
#include "exec/member_plan.h"
#include "exec/round_coordinator.h"

namespace swarmlab::exec {
namespace {

std::uint64_t random_u64() {
  std::uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v))
    v = static_cast<std::uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(EventLoop::monotonic_seconds() * 1e9);
  return v;
}

class PeerProcess {
 public:
  PeerProcess(const PeerConfig& cfg, std::ostream& out, std::ostream& log)
      : cfg_(cfg), out_(out), log_(log), loop_(cfg.clock_origin), incarnation_(random_u64()) {
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
    e.compute_sps = cfg.announce.compute_sps;
    e.pacing = cfg.pacing && cfg.pace_all_bps <= 0;
    e.trace_path = cfg.trace_path;
    env_ = std::make_unique<LiveEnvironment>(loop_, std::move(t), e);
    service_ = std::make_unique<core::averaging::AveragingService>(*env_);
    mux_.add(core::Service::Averaging,
             [this](core::PeerId from, core::Message m) {
               if (!cfg_.trace_path.empty() && m.bytes.size() > 1)  // arrivals on the timeline
                 env_->trace("recv", (m.bytes[1] == 1 ? "part from " : "averaged from ") + std::to_string(from),
                             env_->now(), env_->now());
               service_->handle(from, m);
             },
             [this](core::PeerId peer) { on_link_failure(peer); });
    mux_.add(kRoundBarrierService, [this](core::PeerId from, core::Message m) { on_round_message(from, m); });
    env_->set_sink(&mux_);
    if (cfg.id == cfg.coordinator) {
      RoundCoordinator::Options o;
      o.peers = cfg.addresses.size();
      o.rounds = cfg.rounds;
      o.startup_timeout_s = cfg.startup_timeout_s;
      o.barrier_timeout_s = cfg.barrier_timeout_s;
      coordinator_ = std::make_unique<RoundCoordinator>(*env_, o, [this](core::PeerId to, const RoundMessage& m) {
        if (to == cfg_.id) {
          // Our own copy goes through the loop too, like everyone else's.
          loop_.schedule(0, [this, m] { on_round(cfg_.id, m); });
        } else {
          env_->send(to, encode_round_message(m));
        }
      });
    }
  }

  int run() {
    // Fill round 0's vector before the sockets open: a loop that is busy for seconds (hundreds of
    // MB on a loaded machine) would stall the handshakes others are waiting on.
    if (cfg_.rounds > 0) prepare_values(0);
    env_->start();
    if (cfg_.pace_all_bps > 0)
      for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p)
        if (p != cfg_.id) env_->transport().set_pacing(p, cfg_.pace_all_bps / 8.0);
    // The first Ready waits until this peer is connected to everyone it can be (or half the
    // startup timeout), so round 0 does not include connection setup.
    const double mesh_deadline = loop_.now() + cfg_.startup_timeout_s / 2;
    std::function<void()> wait_for_mesh = [this, mesh_deadline, &wait_for_mesh] {
      if (mesh_ready() || loop_.now() >= mesh_deadline) {
        become_ready();
        return;
      }
      loop_.schedule(0.02, wait_for_mesh);
    };
    wait_for_mesh();
    loop_.run();
    nlohmann::ordered_json exit_line;
    const auto& s = env_->transport().stats();
    exit_line["peer"] = cfg_.id;
    exit_line["event"] = "exit";
    exit_line["ok"] = ok_;
    exit_line["rounds_run"] = rounds_run_;
    exit_line["abandoned"] = abandoned_;
    exit_line["bytes_sent"] = s.bytes_sent;
    exit_line["bytes_received"] = s.bytes_received;
    exit_line["rejected_connections"] = s.rejected_connections;
    exit_line["link_failures"] = s.link_failures;
    exit_line["malformed_messages"] = service_->malformed_messages();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    exit_line["cpu_user_s"] = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec * 1e-6;
    exit_line["cpu_system_s"] = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec * 1e-6;
    out_ << exit_line.dump() << std::endl;
    return ok_ && !abandoned_ ? 0 : 1;
  }

 private:
  // Idle: waiting for Start; InRound: a round runs; Finished: Done arrived, draining.
  enum class State { Idle, InRound, Finished };

  void become_ready() {
    state_ = State::Idle;
    if (next_round_ < cfg_.rounds) prepare_values(next_round_);
    send_ready();
    arm_idle_timeout();
  }

  bool mesh_ready() const {
    for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p) {
      if (p == cfg_.id || (!cfg_.addresses[p] && !cfg_.addresses[cfg_.id])) continue;  // two clients never connect
      if (!env_->transport().connected(p)) return false;
    }
    return true;
  }

  void send_ready() {
    if (state_ != State::Idle) return;
    ReadyMsg ready;
    ready.incarnation = incarnation_;
    ready.next_round = next_round_;
    ready.announce = cfg_.announce;
    if (coordinator_) coordinator_->on_ready(cfg_.id, ready);
    else env_->send(cfg_.coordinator, encode_round_message(ready));
    loop_.cancel(ready_timer_);
    ready_timer_ = loop_.schedule(cfg_.ready_interval_s, [this] {
      ready_timer_ = 0;
      send_ready();
    });
  }

  void arm_idle_timeout() {
    loop_.cancel(idle_timer_);
    idle_timer_ = loop_.schedule(cfg_.idle_timeout_s, [this] {
      idle_timer_ = 0;
      if (state_ != State::Idle) return;
      log_ << "peer " << cfg_.id << ": no Start or Done from the coordinator for " << cfg_.idle_timeout_s
           << " s; giving up\n";
      abandoned_ = true;
      finish();
    });
  }

  void on_round_message(core::PeerId from, const core::Message& m) {
    RoundMessage msg;
    try {
      msg = decode_round_message(m, cfg_.addresses.size());
    } catch (const core::DecodeError&) {
      return;  // garbage: dropped
    }
    on_round(from, msg);
  }

  void on_round(core::PeerId from, const RoundMessage& msg) {
    if (const auto* ready = std::get_if<ReadyMsg>(&msg)) {
      if (coordinator_) coordinator_->on_ready(from, *ready);
      return;
    }
    if (from != cfg_.coordinator) return;
    if (std::holds_alternative<DoneMsg>(msg)) {
      finish();
      return;
    }
    const auto& start = std::get<StartMsg>(msg);
    if (state_ != State::Idle || start.round < next_round_) return;  // late or duplicate
    start_round(start);
  }

  void prepare_values(std::uint64_t round) {
    if (prepared_round_ == round) return;
    values_.resize(cfg_.parameters);
    fill_gradient(gradient_key(cfg_.seed, round, cfg_.id), values_);
    prepared_round_ = round;
  }

  void start_round(const StartMsg& start) {
    loop_.cancel(ready_timer_);
    ready_timer_ = 0;
    loop_.cancel(idle_timer_);
    idle_timer_ = 0;
    next_round_ = start.round + 1;
    PlanInputs in;
    in.strategy = cfg_.strategy;
    in.length = cfg_.parameters;
    in.codec = cfg_.codec;
    in.part_bytes = cfg_.part_bytes;
    in.target_batch = cfg_.target_batch;
    core::averaging::RoundPlan plan;
    try {
      plan = member_plan(start, in);
    } catch (const std::invalid_argument& e) {
      log_ << "peer " << cfg_.id << ": round " << start.round << " cannot run: " << e.what() << "\n";
      ok_ = false;
      become_ready();
      return;
    }
    const auto me = plan.index_of(cfg_.id);
    if (!me) {  // announced, but the strategy gives this peer nothing to do this round
      become_ready();
      return;
    }
    prepare_values(start.round);
    state_ = State::InRound;
    ++rounds_run_;
    const auto& s = env_->transport().stats();
    sent_at_start_ = s.bytes_sent;
    received_at_start_ = s.bytes_received;
    if (cfg_.die_round && *cfg_.die_round == start.round)
      loop_.schedule(cfg_.die_after_s, [] { raise(SIGKILL); });
    plan_ = plan;
    service_->start_round(std::move(plan), values_, cfg_.timeouts,
                          [this](const core::averaging::RoundOutcome& outcome) { on_round_done(outcome); });
  }

  void on_round_done(const core::averaging::RoundOutcome& o) {
    const auto& s = env_->transport().stats();
    const std::uint64_t sent = s.bytes_sent - sent_at_start_;
    const std::uint64_t received = s.bytes_received - received_at_start_;
    // The check and the next vector take the loop for a while (many MB): first let this peer's
    // queued messages - averaged parts others still wait for - reach the kernel, so its work never
    // lengthens anyone else's round. The round object is destroyed on the next turn
    // (AveragingService), and values_ stays untouched until become_ready().
    after_drain(loop_.now() + cfg_.connect_timeout_s, [this, o, sent, received] { report_round(o, sent, received); });
  }

  void after_drain(double deadline, std::function<void()> then) {
    if (env_->transport().queued_bytes() == 0 || loop_.now() > deadline) {
      loop_.schedule(0, std::move(then));
      return;
    }
    loop_.schedule(0.002, [this, deadline, then = std::move(then)]() mutable { after_drain(deadline, std::move(then)); });
  }

  void report_round(const core::averaging::RoundOutcome& o, std::uint64_t sent, std::uint64_t received) {
    const std::size_t me = *plan_.index_of(cfg_.id);
    const bool sends = plan_.sends(me);
    const bool clean = o.dropped_senders.empty() && o.dropped_reducers.empty();
    AverageCheck check;
    const double tolerance = codec_tolerance(cfg_.codec);
    if (sends) {
      std::uint64_t stride = cfg_.check_stride;
      if (stride == 0) stride = std::max<std::uint64_t>(1, cfg_.parameters >> 20);
      check = check_average(plan_, cfg_.seed, values_, stride, o.round_id % stride);
    }
    // When any member dropped a peer there is no single exact average to compare with, and a
    // member cannot tell from here whether others did (a reducer that dropped a sender returns
    // averages without it): values_ok is the plain comparison, "clean" says whether this member
    // dropped anyone, and the launcher, which sees every member, judges the round.
    const bool values_ok = !sends || check.max_abs_error <= tolerance;
    if (!o.completed) ok_ = false;

    nlohmann::ordered_json j;
    j["peer"] = cfg_.id;
    j["round"] = o.round_id;
    j["member"] = true;
    j["sends"] = sends;
    j["participants"] = plan_.size();
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
      log_ << "peer " << cfg_.id << ": round " << o.round_id << " max error " << check.max_abs_error
           << " exceeds the tolerance " << tolerance << "\n";
    become_ready();
  }

  void on_link_failure(core::PeerId peer) {
    service_->on_link_failure(peer);
    if (coordinator_) coordinator_->on_link_failure(peer);
    // The coordinator gone after the last round: nobody is left to say Done.
    if (peer == cfg_.coordinator && state_ == State::Idle && next_round_ >= cfg_.rounds) finish();
  }

  void finish() {
    if (state_ == State::Finished) return;
    state_ = State::Finished;
    loop_.cancel(ready_timer_);
    loop_.cancel(idle_timer_);
    // Let queued messages (Done to the others, the last averaged parts) reach the kernel, then
    // stay a moment so peers read them before our sockets close.
    const double deadline = loop_.now() + cfg_.connect_timeout_s + 1;
    drain(deadline);
  }

  void drain(double deadline) {
    if (env_->transport().queued_bytes() == 0 || loop_.now() > deadline) {
      loop_.schedule(0.1, [this] { loop_.stop(); });
      return;
    }
    loop_.schedule(0.01, [this, deadline] { drain(deadline); });
  }

  const PeerConfig& cfg_;
  std::ostream& out_;
  std::ostream& log_;
  EventLoop loop_;
  std::uint64_t incarnation_;
  std::unique_ptr<LiveEnvironment> env_;
  std::unique_ptr<core::averaging::AveragingService> service_;
  core::ServiceMux mux_;
  std::unique_ptr<RoundCoordinator> coordinator_;
  State state_ = State::Idle;
  std::uint64_t next_round_ = 0;
  std::optional<std::uint64_t> prepared_round_;
  std::vector<float> values_;
  core::averaging::RoundPlan plan_;
  EventLoop::TimerId ready_timer_ = 0, idle_timer_ = 0;
  std::uint64_t sent_at_start_ = 0, received_at_start_ = 0;
  std::uint64_t rounds_run_ = 0;
  bool ok_ = true;
  bool abandoned_ = false;
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
