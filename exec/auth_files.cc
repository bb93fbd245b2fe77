#include "exec/auth_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <span>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "exec/entropy.h"

namespace swarmlab::exec {
namespace {

using core::InputError;
using core::auth::to_hex;
using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot be read");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(path, "", std::string("not valid JSON (") + e.what() + ")");
  }
}

const json& field(const json& j, const std::string& path, const std::string& name) {
  if (!j.is_object()) throw InputError(path, "", "expected a JSON object");
  if (!j.contains(name)) throw InputError(path, name, "missing");
  return j.at(name);
}

template <std::size_t N>
std::array<std::uint8_t, N> hex_field(const json& j, const std::string& path, const std::string& name) {
  const json& v = field(j, path, name);
  std::optional<std::array<std::uint8_t, N>> bytes;
  if (v.is_string()) bytes = core::auth::from_hex<N>(v.get<std::string>());
  if (!bytes) throw InputError(path, name, "expected " + std::to_string(2 * N) + " hex digits");
  return *bytes;
}

// Creates `path` exclusively with `mode` and writes `text`; nothing is overwritten.
void write_new_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    throw std::invalid_argument(path + ": cannot create (" + std::strerror(errno) + "); an existing file is never overwritten");
  const ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) throw std::runtime_error(path + ": write failed");
}

}  // namespace

core::auth::KeyPair generate_key_pair() {
  core::auth::KeySeed seed;
  fill_random(seed);
  return core::auth::keypair_from_seed(seed);
}

void save_key_file(const std::string& path, const core::auth::KeyPair& key) {
  json j;
  j["public_key"] = to_hex(key.public_key);
  j["secret_seed"] = to_hex(std::span(key.secret_key).first(32));
  write_new_file(path, j.dump(2) + "\n", 0600);
}

core::auth::KeyPair load_key_file(const std::string& path) {
  const json j = read_json(path);
  const auto seed = hex_field<32>(j, path, "secret_seed");
  const auto pk = hex_field<32>(j, path, "public_key");
  core::auth::KeyPair key = core::auth::keypair_from_seed(seed);
  if (key.public_key != pk) throw InputError(path, "public_key", "does not belong to secret_seed");
  return key;
}

std::set<std::string> load_allowlist(const std::string& path) {
  const json j = read_json(path);
  const json& users = field(j, path, "users");
  if (!users.is_array()) throw InputError(path, "users", "expected an array of user names");
  std::set<std::string> out;
  for (std::size_t i = 0; i < users.size(); ++i) {
    const std::string where = "users[" + std::to_string(i) + "]";
    if (!users[i].is_string() || !core::auth::valid_user_name(users[i].get<std::string>()))
      throw InputError(path, where, "expected a user name of 1 to 64 printable ASCII characters without spaces");
    if (!out.insert(users[i].get<std::string>()).second) throw InputError(path, where, "duplicate user name");
  }
  return out;
}

void save_token_file(const std::string& path, const IssuedToken& issued) {
  json j;
  j["user"] = issued.token.user;
  j["peer_public_key"] = to_hex(issued.token.peer_key);
  j["expiration_unix_s"] = issued.token.expiration_s;
  j["signature"] = to_hex(issued.token.signature);
  j["authority_public_key"] = to_hex(issued.authority);
  j["bootstrap"] = issued.bootstrap;
  write_new_file(path, j.dump(2) + "\n", 0600);
}

IssuedToken load_token_file(const std::string& path) {
  const json j = read_json(path);
  IssuedToken t;
  const json& user = field(j, path, "user");
  if (!user.is_string() || !core::auth::valid_user_name(user.get<std::string>()))
    throw InputError(path, "user", "expected a user name of 1 to 64 printable ASCII characters without spaces");
  t.token.user = user.get<std::string>();
  t.token.peer_key = hex_field<32>(j, path, "peer_public_key");
  const json& exp = field(j, path, "expiration_unix_s");
  if (!exp.is_number() || !std::isfinite(exp.get<double>())) throw InputError(path, "expiration_unix_s", "expected a number");
  t.token.expiration_s = exp.get<double>();
  t.token.signature = hex_field<64>(j, path, "signature");
  t.authority = hex_field<32>(j, path, "authority_public_key");
  const json& bootstrap = field(j, path, "bootstrap");
  if (!bootstrap.is_string()) throw InputError(path, "bootstrap", "expected a string (host:port, or empty)");
  t.bootstrap = bootstrap.get<std::string>();
  if (!t.token.signed_by(t.authority))
    throw InputError(path, "signature", "not the authority's signature over this token");
  return t;
}

void save_peer_keys(const std::string& path, const std::vector<std::optional<core::auth::PublicKey>>& keys) {
  json list = json::array();
  for (const auto& k : keys) list.push_back(k ? json(to_hex(*k)) : json());
  json j;
  j["public_keys"] = std::move(list);
  write_new_file(path, j.dump(2) + "\n", 0644);
}

std::vector<std::optional<core::auth::PublicKey>> load_peer_keys(const std::string& path) {
  const json j = read_json(path);
  const json& list = field(j, path, "public_keys");
  if (!list.is_array()) throw InputError(path, "public_keys", "expected an array of public keys (hex) or null, by peer id");
  std::vector<std::optional<core::auth::PublicKey>> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_null()) {
      out.emplace_back();
      continue;
    }
    std::optional<core::auth::PublicKey> key;
    if (list[i].is_string()) key = core::auth::from_hex<32>(list[i].get<std::string>());
    if (!key) throw InputError(path, "public_keys[" + std::to_string(i) + "]", "expected 64 hex digits or null");
    out.push_back(key);
  }
  return out;
}

core::auth::PublicKey parse_public_key(const std::string& hex, const std::string& what) {
  const auto key = core::auth::from_hex<32>(hex);
  if (!key) throw InputError("command line", what, "expected a public key of 64 hex digits");
  return *key;
}

}  // namespace swarmlab::exec
