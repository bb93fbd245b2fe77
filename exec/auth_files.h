#pragma once
// The allowlist authority's files (docs/trust.md §1), all JSON:
//   key file:   {"public_key": hex, "secret_seed": hex}     (32 bytes each; written 0600)
//   allowlist:  {"users": ["alice", "bob", ...]}
//   token file: {"user", "peer_public_key", "expiration_unix_s", "signature",
//                "authority_public_key", "bootstrap"}      (what `auth issue` hands a user)
//   peer keys:  {"public_keys": [hex or null, ...]}        (by peer id: a live run's key directory,
//                                                          shared like its addresses)
// Loaders throw core::InputError naming the file, the field and what was expected.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/auth/access_token.h"

namespace swarmlab::exec {

struct IssuedToken {
  core::auth::AccessToken token;
  core::auth::PublicKey authority{};
  std::string bootstrap;  // host:port of a peer to join through (may be empty)
};

// A fresh key pair from the operating system's entropy.
core::auth::KeyPair generate_key_pair();
// Writes a new key file; refuses (std::invalid_argument) to overwrite an existing one.
void save_key_file(const std::string& path, const core::auth::KeyPair& key);
core::auth::KeyPair load_key_file(const std::string& path);

std::set<std::string> load_allowlist(const std::string& path);

void save_token_file(const std::string& path, const IssuedToken& issued);
// Also checks that the token is signed by the authority it names.
IssuedToken load_token_file(const std::string& path);

void save_peer_keys(const std::string& path, const std::vector<std::optional<core::auth::PublicKey>>& keys);
std::vector<std::optional<core::auth::PublicKey>> load_peer_keys(const std::string& path);

// A 64-digit hex public key given on a command line (`what` names the option).
core::auth::PublicKey parse_public_key(const std::string& hex, const std::string& what);

}  // namespace swarmlab::exec
