#pragma once
// The launcher as the allowlist authority of a local run (docs/trust.md §1): it writes, under a
// folder of the run, an authority key, an allowlist of the peers' user names, a key pair and a
// token for each peer, and the run's key directory, and hands each peer its `swarmlab peer`
// arguments (--auth-key, --auth-token, --auth-peer-keys).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace swarmlab::exec {

struct LaunchAuth {
  double ttl_s = 24 * 3600;  // tokens expire this long after the launch
  // This peer is not on the allowlist: its token is signed by another authority (a peer that got
  // hold of the run's addresses but not of a token). For tests.
  std::optional<std::size_t> unlisted;
};

// Replaces `dir` (files are never overwritten, so an old run's go first). Returns each peer's
// arguments.
std::vector<std::vector<std::string>> write_launch_auth(const LaunchAuth& auth, std::size_t peers, const std::string& dir);

}  // namespace swarmlab::exec
