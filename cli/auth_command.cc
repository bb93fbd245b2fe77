// swarmlab auth: the allowlist authority (docs/trust.md §1). `keygen` writes a key pair; `issue`
// checks a user against the allowlist and signs an access token for one peer key.
#include <iostream>

#include "cli/command.h"
#include "core/input_error.h"
#include "exec/auth_files.h"
#include "exec/event_loop.h"

namespace swarmlab::cli {
namespace {

struct AuthArgs {
  std::string key_out;
  std::string authority, allowlist, user, peer_key, bootstrap, token_out;
  double ttl_s = 0;
};

const bool auth_registered = register_command(
    "auth", "Allowlist authority: key pairs and signed access tokens (docs/trust.md)",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<AuthArgs>();
      sub.require_subcommand(1);
      CLI::App* keygen = sub.add_subcommand("keygen", "write a new Ed25519 key pair (an authority's or a peer's)");
      keygen->add_option("--out", args->key_out, "key file to create (never overwritten)")->required();
      CLI::App* issue = sub.add_subcommand("issue", "sign an access token for an allowlisted user's peer key");
      issue->add_option("--authority", args->authority, "the authority's key file")->required();
      issue->add_option("--allowlist", args->allowlist, "allowlist file: {\"users\": [...]}")->required();
      issue->add_option("--user", args->user, "user name (must be on the allowlist)")->required();
      issue->add_option("--peer-key", args->peer_key, "the peer's public key (64 hex digits)")->required();
      issue->add_option("--ttl", args->ttl_s, "seconds the token is valid from now")->required()->check(CLI::PositiveNumber);
      issue->add_option("--bootstrap", args->bootstrap, "host:port a new peer joins through (written into the token file)");
      issue->add_option("--out", args->token_out, "token file to create (never overwritten)")->required();
      return [args, keygen, issue] {
        if (keygen->parsed()) {
          const core::auth::KeyPair key = exec::generate_key_pair();
          exec::save_key_file(args->key_out, key);
          std::cout << core::auth::to_hex(key.public_key) << "\n";
          return kExitOk;
        }
        (void)issue;
        const core::auth::KeyPair authority = exec::load_key_file(args->authority);
        const std::set<std::string> users = exec::load_allowlist(args->allowlist);
        if (!users.count(args->user))
          throw core::InputError(args->allowlist, "users", "does not list '" + args->user + "'; no token issued");
        exec::IssuedToken issued;
        issued.token = core::auth::issue_token(authority, args->user, exec::parse_public_key(args->peer_key, "--peer-key"),
                                               exec::EventLoop::unix_seconds() + args->ttl_s);
        issued.authority = authority.public_key;
        issued.bootstrap = args->bootstrap;
        exec::save_token_file(args->token_out, issued);
        std::cout << "token for " << args->user << " valid for " << args->ttl_s << " s written to " << args->token_out << "\n";
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
