// libFuzzer target for the allowlist authentication's decoders (tests/fuzz/run_fuzz.sh auth):
// access tokens and envelopes (core/auth/). Any bytes either decode into a value that survives an
// encode round trip, or throw core::DecodeError; and a receiver opening them (as an envelope from
// a listed peer) rejects them without crashing, unless they are a genuine envelope, which only
// the seed corpus holds, and then only once: the same bytes again are a replay.
//
// Built with -DAUTH_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/auth/access_token.h"
#include "core/auth/authenticator.h"
#include "core/wire.h"

namespace {

using namespace swarmlab::core;
using namespace swarmlab::core::auth;

constexpr double kNow = 1.8e9;

KeyPair key(std::uint8_t n) {
  KeySeed s{};
  s.fill(n);
  return keypair_from_seed(s);
}
const KeyPair& authority() {
  static const KeyPair k = key(1);
  return k;
}
const KeyPair& sender() {
  static const KeyPair k = key(2);
  return k;
}
const KeyPair& receiver() {
  static const KeyPair k = key(3);
  return k;
}
Authenticator make(const KeyPair& k, const char* user, std::uint64_t incarnation) {
  return Authenticator(authority().public_key, k, issue_token(authority(), user, k.public_key, kNow + 3600), incarnation);
}

void check_token(std::span<const std::uint8_t> bytes) {
  try {
    const AccessToken t = decode_token(bytes);
    if (!(decode_token(encode_token(t)) == t)) std::abort();
  } catch (const DecodeError&) {
  }
}

void check_envelope(std::span<const std::uint8_t> bytes) {
  try {
    const Envelope e = decode_envelope(bytes);
    if (e.payload.size() + envelope_overhead(e.token.user.size()) != bytes.size()) std::abort();
  } catch (const DecodeError&) {
  }
  Authenticator r = make(receiver(), "receiver", 9);
  const auto first = r.open(bytes, 0, kNow, sender().public_key);
  const auto again = r.open(bytes, 0, kNow, sender().public_key);
  if (!again.rejection) std::abort();  // nothing is accepted twice
  if (!first.rejection && again.rejection != Rejection::Replayed) std::abort();
}

}  // namespace

#ifndef AUTH_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_token(in);
  check_envelope(in);
  return 0;
}

#else

#include "tests/fuzz/corpus_writer.h"

int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  corpus.write("token", encode_token(issue_token(authority(), "alice", sender().public_key, kNow + 60)));
  Authenticator s = make(sender(), "sender", 5);
  corpus.write("envelope", s.seal(receiver().public_key, std::vector<std::uint8_t>{2, 1, 0, 0, 7}, 0, kNow));
  corpus.write("envelope_empty", s.seal(receiver().public_key, {}, 0, kNow));
  corpus.write("envelope_other_receiver", s.seal(sender().public_key, std::vector<std::uint8_t>{1}, 0, kNow));
  return corpus.done();
}

#endif
