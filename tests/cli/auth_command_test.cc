// End to end: `swarmlab auth keygen` and `swarmlab auth issue`, and their bad inputs.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/auth/authenticator.h"
#include "core/input_error.h"
#include "exec/auth_files.h"
#include "run_cli.h"

namespace swarmlab::cli::testing {
namespace {

struct Dir {
  Dir() {
    char tmpl[] = "/tmp/swarmlab-auth-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { run_command("rm -rf " + path); }
  std::string file(const std::string& name, const std::string& text = "") const {
    const std::string p = path + "/" + name;
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }
  std::string path;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST(AuthCommand, KeygenIssueAndTheTokenOpensEnvelopes) {
  Dir d;
  const CliResult authority = run_swarmlab("auth keygen --out " + d.file("authority.json"));
  ASSERT_EQ(authority.exit_code, 0);
  const CliResult peer = run_swarmlab("auth keygen --out " + d.file("peer.json"));
  ASSERT_EQ(peer.exit_code, 0);
  EXPECT_EQ(trim(peer.out).size(), 64u);
  struct stat st{};
  ASSERT_EQ(stat(d.file("peer.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // a secret: for its owner only
  // Never overwritten: a second keygen to the same file fails and the key is still there.
  EXPECT_EQ(run_swarmlab("auth keygen --out " + d.file("peer.json")).exit_code, 2);
  EXPECT_EQ(core::auth::to_hex(exec::load_key_file(d.file("peer.json")).public_key), trim(peer.out));

  const std::string allow = d.file("allow.json", R"({"users": ["alice", "bob"]})");
  const CliResult issued = run_swarmlab("auth issue --authority " + d.file("authority.json") + " --allowlist " + allow +
                                        " --user alice --peer-key " + trim(peer.out) + " --ttl 3600 --bootstrap 10.0.0.1:7000 --out " +
                                        d.file("alice.token"));
  ASSERT_EQ(issued.exit_code, 0) << issued.out;
  const exec::IssuedToken t = exec::load_token_file(d.file("alice.token"));
  EXPECT_EQ(t.token.user, "alice");
  EXPECT_EQ(core::auth::to_hex(t.authority), trim(authority.out));
  EXPECT_EQ(t.bootstrap, "10.0.0.1:7000");
  const double now = static_cast<double>(time(nullptr));
  EXPECT_NEAR(t.token.expiration_s, now + 3600, 60);
  // The token works: a peer holding it and its key is accepted by another listed peer.
  const core::auth::KeyPair key = exec::load_key_file(d.file("peer.json"));
  core::auth::Authenticator alice(t.authority, key, t.token, 1);
  const core::auth::KeyPair other = core::auth::keypair_from_seed(core::auth::KeySeed{7});
  core::auth::Authenticator receiver(t.authority, other,
                                     core::auth::issue_token(exec::load_key_file(d.file("authority.json")), "bob", other.public_key, now + 60), 2);
  const std::vector<std::uint8_t> payload = {1, 2, 3};
  EXPECT_FALSE(receiver.open(alice.seal(other.public_key, payload, 0, now), 0, now, key.public_key).rejection);
}

TEST(AuthCommand, BadInputsNameTheFileAndFieldAndIssueNothing) {
  Dir d;
  ASSERT_EQ(run_swarmlab("auth keygen --out " + d.file("authority.json")).exit_code, 0);
  const std::string key = trim(run_swarmlab("auth keygen --out " + d.file("peer.json")).out);
  const std::string allow = d.file("allow.json", R"({"users": ["alice"]})");
  auto issue = [&](const std::string& user, const std::string& peer_key, const std::string& allowlist, const std::string& authority,
                   const std::string& ttl = "60") {
    return run_swarmlab("auth issue --authority " + authority + " --allowlist " + allowlist + " --user " + user + " --peer-key " +
                            peer_key + " --ttl " + ttl + " --out " + d.file("t.token"),
                        true);
  };
  struct Case {
    CliResult r;
    std::string expect;
  };
  const std::string auth = d.file("authority.json");
  const Case cases[] = {
      {issue("mallory", key, allow, auth), "allow.json: users: does not list 'mallory'"},
      {issue("alice", "abc", allow, auth), "--peer-key: expected a public key of 64 hex digits"},
      {issue("alice", key, d.file("bad.json", R"({"users": "alice"})"), auth), "bad.json: users: expected an array"},
      {issue("alice", key, d.file("dup.json", R"({"users": ["a", "a"]})"), auth), "dup.json: users[1]: duplicate"},
      {issue("alice", key, d.file("broken.json", "{"), auth), "broken.json: not valid JSON"},
      {issue("alice", key, allow, d.file("k.json", R"({"public_key": "00", "secret_seed": "00"})")), "k.json: secret_seed: expected 64 hex digits"},
      {issue("alice", key, allow, d.file("missing.json")), "missing.json: cannot be read"},
      {issue("alice", key, allow, auth, "0"), "--ttl"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.exit_code, 2) << c.expect;
    EXPECT_NE(c.r.out.find(c.expect), std::string::npos) << c.r.out;
  }
  EXPECT_NE(access(d.file("t.token").c_str(), F_OK), 0);  // nothing was issued
  // A token file whose signature is not the authority's is refused when loaded.
  ASSERT_EQ(issue("alice", key, allow, auth).exit_code, 0);
  std::ifstream in(d.file("t.token"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("alice"), 5, "carol");
  const std::string forged = d.file("forged.token", text);
  try {
    exec::load_token_file(forged);
    ADD_FAILURE() << "a forged token loaded";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("forged.token: signature: not the authority's"), std::string::npos) << e.what();
  }
}

// `swarmlab peer --auth-*`: the three files are checked before the peer starts (exit 2, naming the
// file and field): the token must be for this peer's key, and the key directory must list it.
TEST(AuthCommand, PeerAuthFilesAreCheckedBeforeThePeerStarts) {
  Dir d;
  ASSERT_EQ(run_swarmlab("auth keygen --out " + d.file("authority.json")).exit_code, 0);
  const std::string k0 = trim(run_swarmlab("auth keygen --out " + d.file("p0.key")).out);
  const std::string k1 = trim(run_swarmlab("auth keygen --out " + d.file("p1.key")).out);
  const std::string allow = d.file("allow.json", R"({"users": ["p0", "p1"]})");
  ASSERT_EQ(run_swarmlab("auth issue --authority " + d.file("authority.json") + " --allowlist " + allow +
                         " --user p0 --peer-key " + k0 + " --ttl 60 --out " + d.file("p0.token"))
                .exit_code,
            0);
  const std::string scenario = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json";  // 8 peers
  auto peer = [&](const std::string& key, const std::string& token, const std::string& keys) {
    std::string args = "peer " + scenario + " --id 0 --peers 0=127.0.0.1:1";
    if (!key.empty()) args += " --auth-key " + key;
    if (!token.empty()) args += " --auth-token " + token;
    if (!keys.empty()) args += " --auth-peer-keys " + keys;
    return run_swarmlab(args, true);
  };
  auto directory = [&](const std::string& name, const std::string& first, std::size_t n) {
    std::string list = "\"" + first + "\"";
    for (std::size_t i = 1; i < n; ++i) list += ", null";
    return d.file(name, R"({"public_keys": [)" + list + "]}");
  };
  struct Case {
    CliResult r;
    std::string expect;
  };
  const Case cases[] = {
      {peer(d.file("p0.key"), "", ""), "--auth-key, --auth-token and --auth-peer-keys go together"},
      {peer(d.file("p1.key"), d.file("p0.token"), directory("keys8.json", k1, 8)), "p0.token: peer_public_key: is not the public key of"},
      {peer(d.file("p0.key"), d.file("p0.token"), directory("keys3.json", k0, 3)), "keys3.json: public_keys: expected one entry per scenario peer (8)"},
      {peer(d.file("p0.key"), d.file("p0.token"), directory("other.json", k1, 8)), "other.json: public_keys[0]: is not this peer's public key"},
      {peer(d.file("p0.key"), d.file("p0.token"), d.file("bad.json", R"({"public_keys": ["xyz"]})")), "bad.json: public_keys[0]: expected 64 hex digits or null"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.exit_code, 2) << c.expect << "\n" << c.r.out;
    EXPECT_NE(c.r.out.find(c.expect), std::string::npos) << c.r.out;
  }
}

}  // namespace
}  // namespace swarmlab::cli::testing
