#pragma once
// Token refresh for a live peer (docs/trust.md §1): every `period_s` the peer looks at its token
// file, and when the file holds a new token for its key from the same authority (the operator ran
// `swarmlab auth issue` again and renamed the result over the old file), later envelopes carry
// it. Nothing in flight is disturbed, so training goes on across the old token's expiry. A file
// that is missing, half-written or for another key is logged and ignored: the old token stays.
#include <functional>
#include <string>

#include "core/auth/authenticator.h"
#include "exec/event_loop.h"

namespace swarmlab::exec {

class TokenRefresher {
 public:
  TokenRefresher(EventLoop& loop, core::auth::Authenticator& authenticator, core::auth::PublicKey authority,
                 std::string token_path, double period_s, std::function<void(const std::string&)> log);
  ~TokenRefresher();
  TokenRefresher(const TokenRefresher&) = delete;
  TokenRefresher& operator=(const TokenRefresher&) = delete;

  std::size_t refreshed() const { return refreshed_; }

 private:
  void check();

  EventLoop& loop_;
  core::auth::Authenticator& auth_;
  core::auth::PublicKey authority_;
  std::string path_;
  double period_s_;
  std::function<void(const std::string&)> log_;
  EventLoop::TimerId timer_ = 0;
  std::size_t refreshed_ = 0;
};

}  // namespace swarmlab::exec
