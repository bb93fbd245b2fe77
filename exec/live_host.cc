#include "exec/live_host.h"

#include <sys/resource.h>

#include <iomanip>
#include <sstream>

#include "exec/entropy.h"

namespace swarmlab::exec {

LiveHost::LiveHost(const LiveHostConfig& cfg, std::ostream& log) : cfg_(cfg), log_(log), loop_(cfg.clock_origin) {
  TcpTransport::Options t;
  t.self = cfg.id;
  t.addresses = cfg.addresses;
  t.discover = cfg.discover;
  t.punch = cfg.punch;
  t.bind = cfg.listen;
  t.network = cfg.network;
  t.connect_timeout_s = cfg.connect_timeout_s;
  t.congestion_control = cfg.congestion_control;
  t.log = [this](const std::string& line) { this->log(line); };
  LiveEnvironmentOptions e;
  e.seed = cfg.seed;
  e.process_nonce = random_u64();
  e.compute_sps = cfg.compute_sps;
  e.pacing = cfg.pacing && cfg.pace_all_bps <= 0;
  e.trace_path = cfg.trace_path;
  env_ = std::make_unique<LiveEnvironment>(loop_, std::move(t), e);
  core::Environment* base = env_.get();
  if (cfg.reachability) base = (relayed_ = std::make_unique<core::relay::RelayedEnvironment>(*env_, *cfg.reachability)).get();
  if (cfg.auth) {
    const LiveAuthConfig& a = *cfg.auth;
    core::auth::AuthenticatedEnvironmentOptions o;
    o.key_of = [keys = a.peer_keys](core::PeerId p) { return p < keys.size() ? keys[p] : std::nullopt; };
    // Tokens and envelopes carry Unix time; the loop's clock counts from the run's origin.
    o.unix_origin_s = EventLoop::unix_seconds() - loop_.now();
    auth_ = std::make_unique<core::auth::AuthenticatedPeer>(
        *base, core::auth::Authenticator(a.authority, a.key, a.token, random_u64()), std::move(o));
    if (!a.token_path.empty())
      token_refresher_ = std::make_unique<TokenRefresher>(loop_, auth_->authenticator(), a.authority, a.token_path, a.refresh_period_s,
                                                          [this](const std::string& line) { this->log(line); });
  }
}

void LiveHost::log(const std::string& line) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << loop_.now() << " peer " << cfg_.id << ": " << line << "\n";
  log_ << s.str() << std::flush;
}

bool LiveHost::mesh_ready() const {
  for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p) {
    // Two clients connect only by a punch, which their first messages start.
    if (p == cfg_.id || (!cfg_.addresses[p] && !cfg_.addresses[cfg_.id])) continue;
    if (!env_->transport().connected(p)) return false;
  }
  return true;
}

void LiveHost::start(std::function<void(std::vector<core::PeerId>)> join) {
  env_->start();
  if (cfg_.pace_all_bps > 0)
    for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p)
      if (p != cfg_.id) env_->transport().set_pacing(p, cfg_.pace_all_bps / 8.0);
  const double mesh_deadline = loop_.now() + cfg_.connect_timeout_s / 2;
  auto join_when_meshed = std::make_shared<std::function<void()>>();
  *join_when_meshed = [this, join = std::move(join), mesh_deadline, join_when_meshed] {
    if (!mesh_ready() && loop_.now() < mesh_deadline) {
      loop_.schedule(0.02, *join_when_meshed);
      return;
    }
    std::vector<core::PeerId> bootstrap;
    for (core::PeerId p = 0; p < cfg_.addresses.size(); ++p)
      if (p != cfg_.id && cfg_.addresses[p]) bootstrap.push_back(p);
    join(std::move(bootstrap));
    *join_when_meshed = nullptr;  // break the self-reference
  };
  loop_.schedule(0, *join_when_meshed);
  keep_alive();
}

bool LiveHost::run() {
  loop_.run();
  return abandoned_;
}

void LiveHost::keep_alive() {
  if (finishing_) return;
  loop_.cancel(idle_timer_);
  idle_timer_ = loop_.schedule(cfg_.idle_timeout_s, [this] {
    idle_timer_ = 0;
    std::ostringstream s;
    s << "no progress for " << cfg_.idle_timeout_s << " s; giving up";
    log(s.str());
    abandoned_ = true;
    finish();
  });
}

void LiveHost::finish() {
  if (finishing_) return;
  finishing_ = true;
  loop_.cancel(idle_timer_);
  // From the loop, not here: the step event that calls this comes before the round's outcome,
  // whose report must still be written. Then stay a moment so peers read our last parts before
  // our sockets close.
  const double deadline = loop_.now() + cfg_.connect_timeout_s + 1;
  loop_.schedule(0, [this, deadline] { drain(deadline); });
}

void LiveHost::drain(double deadline) {
  // Until the others acknowledged our last bytes: closing a socket that still holds unread input
  // resets it, and the receiver loses what it had not read (a reducer's last averages).
  if ((env_->transport().unacknowledged_bytes() == 0 && holds_ == 0) || loop_.now() > deadline) {
    loop_.schedule(0.1, [this] { loop_.stop(); });
    return;
  }
  loop_.schedule(0.01, [this, deadline] { drain(deadline); });
}

void LiveHost::after_drain(double deadline, std::function<void()> then) {
  if (env_->transport().queued_bytes() == 0 || loop_.now() > deadline) {
    loop_.schedule(0, std::move(then));
    return;
  }
  loop_.schedule(0.002, [this, deadline, then = std::move(then)]() mutable { after_drain(deadline, std::move(then)); });
}

void LiveHost::add_exit_counters(nlohmann::ordered_json& line) {
  const auto& s = env_->transport().stats();
  line["abandoned"] = abandoned_;
  line["bytes_sent"] = s.bytes_sent;
  line["bytes_received"] = s.bytes_received;
  line["rejected_connections"] = s.rejected_connections;
  line["link_failures"] = s.link_failures;
  if (!cfg_.punch.empty()) line["punched_connections"] = s.punched_connections;
  if (relayed_) {
    const auto& r = relayed_->stats();
    line["relay"] = {{"sent_relayed", r.sent_relayed}, {"received_relayed", r.received_relayed}, {"forwarded", r.forwarded},
                     {"forwarded_bytes", r.forwarded_bytes}, {"refused", r.refused}, {"dropped_frames", r.dropped_frames}};
  }
  if (auth_) {
    const core::auth::Authenticator& authenticator = auth_->authenticator();
    nlohmann::ordered_json rejected = nlohmann::ordered_json::object();
    for (std::size_t r = 0; r < core::auth::kRejectionKinds; ++r)
      if (const auto n = authenticator.rejected(static_cast<core::auth::Rejection>(r)))
        rejected[core::auth::name(static_cast<core::auth::Rejection>(r))] = n;
    line["auth_accepted"] = authenticator.accepted();
    line["auth_rejected"] = std::move(rejected);
    line["auth_unknown_peers"] = auth_->env().unknown_peers();
    line["auth_tokens_refreshed"] = token_refresher_ ? token_refresher_->refreshed() : 0;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  line["cpu_user_s"] = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec * 1e-6;
  line["cpu_system_s"] = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec * 1e-6;
}

}  // namespace swarmlab::exec
