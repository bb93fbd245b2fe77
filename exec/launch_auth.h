#pragma once
// The launcher as the allowlist authority of a local run (docs/trust.md §1): it writes, under a
// folder of the run, an authority key, an allowlist of the peers' user names, a key pair and a
// token for each peer, and the run's key directory, and hands each peer its `swarmlab peer`
// arguments (--auth-key, --auth-token, --auth-peer-keys). Like an authority a peer asks again
// before its token expires, it re-issues every token when a third of its lifetime is left; the
// peers pick the new files up (exec/token_refresher.h).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/auth/signing.h"

namespace swarmlab::exec {

struct LaunchAuth {
  double ttl_s = 24 * 3600;  // each token expires this long after it was issued
  // This peer is not on the allowlist: its token is signed by another authority (a peer that got
  // hold of the run's addresses but not of a token). For tests.
  std::optional<std::size_t> unlisted;
};

class LaunchAuthority {
 public:
  // Replaces `dir` (files are never overwritten, so an old run's go first).
  LaunchAuthority(const LaunchAuth& auth, std::size_t peers, std::string dir);

  const std::vector<std::string>& peer_arguments(std::size_t peer) const { return args_.at(peer); }
  // Re-issues the tokens once a third of their lifetime is left (new file, renamed over the old).
  void maybe_reissue();
  std::size_t reissued() const { return reissued_; }

 private:
  void issue_all();

  LaunchAuth auth_;
  std::string dir_;
  core::auth::KeyPair authority_, rogue_;
  std::vector<core::auth::KeyPair> keys_;
  std::vector<std::vector<std::string>> args_;
  double expiration_ = 0;
  std::size_t reissued_ = 0;
};

}  // namespace swarmlab::exec
