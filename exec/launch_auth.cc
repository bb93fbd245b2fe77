#include "exec/launch_auth.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "exec/auth_files.h"
#include "exec/event_loop.h"

namespace swarmlab::exec {
namespace {

std::string user(std::size_t peer) { return "peer-" + std::to_string(peer); }

}  // namespace

LaunchAuthority::LaunchAuthority(const LaunchAuth& auth, std::size_t peers, std::string dir)
    : auth_(auth), dir_(std::move(dir)), authority_(generate_key_pair()), rogue_(generate_key_pair()) {
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  save_key_file(dir_ + "/authority.json", authority_);
  nlohmann::json allow;
  allow["users"] = nlohmann::json::array();
  for (std::size_t i = 0; i < peers; ++i)
    if (i != auth_.unlisted) allow["users"].push_back(user(i));
  std::ofstream(dir_ + "/allowlist.json") << allow.dump(2) << "\n";
  std::vector<std::optional<core::auth::PublicKey>> directory;
  for (std::size_t i = 0; i < peers; ++i) {
    keys_.push_back(generate_key_pair());
    save_key_file(dir_ + "/" + user(i) + ".key", keys_.back());
    directory.push_back(keys_.back().public_key);
    args_.push_back({"--auth-key", dir_ + "/" + user(i) + ".key", "--auth-token", dir_ + "/" + user(i) + ".token",
                     "--auth-peer-keys", dir_ + "/peer-keys.json"});
  }
  save_peer_keys(dir_ + "/peer-keys.json", directory);
  issue_all();
}

void LaunchAuthority::issue_all() {
  expiration_ = EventLoop::unix_seconds() + auth_.ttl_s;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    // The unlisted peer's token comes from an authority of its own making.
    const core::auth::KeyPair& signer = i == auth_.unlisted ? rogue_ : authority_;
    IssuedToken issued;
    issued.token = core::auth::issue_token(signer, user(i), keys_[i].public_key, expiration_);
    issued.authority = signer.public_key;
    const std::string path = dir_ + "/" + user(i) + ".token";
    std::filesystem::remove(path + ".new");
    save_token_file(path + ".new", issued);
    std::filesystem::rename(path + ".new", path);  // a peer never reads half a file
  }
}

void LaunchAuthority::maybe_reissue() {
  if (EventLoop::unix_seconds() < expiration_ - auth_.ttl_s / 3) return;
  issue_all();
  ++reissued_;
}

}  // namespace swarmlab::exec
