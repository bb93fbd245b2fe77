#include "exec/token_refresher.h"

#include "exec/auth_files.h"

namespace swarmlab::exec {

TokenRefresher::TokenRefresher(EventLoop& loop, core::auth::Authenticator& authenticator, core::auth::PublicKey authority,
                               std::string token_path, double period_s, std::function<void(const std::string&)> log)
    : loop_(loop),
      auth_(authenticator),
      authority_(authority),
      path_(std::move(token_path)),
      period_s_(period_s),
      log_(std::move(log)) {
  timer_ = loop_.schedule(period_s_, [this] { check(); });
}

TokenRefresher::~TokenRefresher() { loop_.cancel(timer_); }

void TokenRefresher::check() {
  timer_ = loop_.schedule(period_s_, [this] { check(); });
  IssuedToken issued;
  try {
    issued = load_token_file(path_);
  } catch (const std::exception& e) {
    if (log_) log_(std::string("token refresh: ") + e.what() + "; keeping the current token");
    return;
  }
  if (issued.token == auth_.token()) return;
  if (issued.authority != authority_ || issued.token.peer_key != auth_.public_key()) {
    if (log_) log_("token refresh: " + path_ + " holds a token for another key or authority; keeping the current token");
    return;
  }
  if (!(issued.token.expiration_s > auth_.token().expiration_s)) return;  // not newer
  auth_.replace_token(issued.token);
  ++refreshed_;
  if (log_) log_("token refresh: a new token from " + path_);
}

}  // namespace swarmlab::exec
