#include "exec/launch_auth.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "exec/auth_files.h"

namespace swarmlab::exec {

std::vector<std::vector<std::string>> write_launch_auth(const LaunchAuth& auth, std::size_t peers, const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const core::auth::KeyPair authority = generate_key_pair();
  save_key_file(dir + "/authority.json", authority);
  nlohmann::json allow;
  allow["users"] = nlohmann::json::array();
  for (std::size_t i = 0; i < peers; ++i)
    if (i != auth.unlisted) allow["users"].push_back("peer-" + std::to_string(i));
  std::ofstream(dir + "/allowlist.json") << allow.dump(2) << "\n";
  const double expiration =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() + auth.ttl_s;
  std::vector<std::optional<core::auth::PublicKey>> keys;
  std::vector<std::vector<std::string>> args;
  for (std::size_t i = 0; i < peers; ++i) {
    const std::string name = "peer-" + std::to_string(i);
    const core::auth::KeyPair key = generate_key_pair();
    save_key_file(dir + "/" + name + ".key", key);
    keys.push_back(key.public_key);
    // The unlisted peer's token comes from an authority of its own making.
    const core::auth::KeyPair signer = i == auth.unlisted ? generate_key_pair() : authority;
    IssuedToken issued;
    issued.token = core::auth::issue_token(signer, name, key.public_key, expiration);
    issued.authority = signer.public_key;
    save_token_file(dir + "/" + name + ".token", issued);
    args.push_back({"--auth-key", dir + "/" + name + ".key", "--auth-token", dir + "/" + name + ".token",
                    "--auth-peer-keys", dir + "/peer-keys.json"});
  }
  save_peer_keys(dir + "/peer-keys.json", keys);
  return args;
}

}  // namespace swarmlab::exec
