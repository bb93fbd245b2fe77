// libFuzzer target for the decoders of forming and running a group (tests/fuzz/run_fuzz.sh group):
// matchmaking messages (core/matchmaking/messages.h), matchmaking declarations in the DHT
// (core/matchmaking/declaration.h) and the peer subkeys they are stored under, the parts of a
// butterfly round (core/averaging/part_message.h) and the announcement (capacity and state step) a
// member attaches to its join request (core/matchmaking/announcement_codec.h).
// The first byte picks the decoder. Any bytes either throw core::DecodeError or decode into a value
// that encodes and decodes back to itself; a decoded part's payload is exactly the size its header
// and codec say, inside the message. Nothing else escapes; sanitizers catch the rest.
//
// Built with -DGROUP_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "core/averaging/part_message.h"
#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/declaration.h"
#include "core/matchmaking/messages.h"
#include "core/wire.h"
#include "tests/fuzz/fuzz_message.h"

namespace {

using namespace swarmlab::core;

void check_matchmaking(std::span<const std::uint8_t> bytes) {
  try {
    const matchmaking::MatchmakingMessage m = matchmaking::decode(bytes);
    if (!(matchmaking::decode(matchmaking::encode(m)) == m)) std::abort();
  } catch (const DecodeError&) {
  }
}

void check_declaration(std::span<const std::uint8_t> bytes) {
  try {
    const matchmaking::Declaration d = matchmaking::decode_declaration(bytes);
    if (!(matchmaking::decode_declaration(matchmaking::encode_declaration(d)) == d)) std::abort();
  } catch (const DecodeError&) {
  }
}

// After the selector, a message as tests/fuzz/fuzz_message.h says.
void check_part(std::span<const std::uint8_t> bytes) {
  const auto fuzzed = swarmlab::fuzz::message_from_fuzz(bytes);
  if (!fuzzed) return;
  const auto& m = *fuzzed;
  try {
    const averaging::DecodedPart p = averaging::decode_part(m);
    if (p.has_payload) {
      if (p.payload.size() != codec::encoded_size(p.header.codec, p.header.elements)) std::abort();
      if (p.payload.data() < m.bytes.data() || p.payload.data() + p.payload.size() > m.bytes.data() + m.bytes.size())
        std::abort();
    }
  } catch (const DecodeError&) {
  }
}

// An announcement that decodes encodes back to the same bytes, with finite non-negative rates.
void check_announcement(std::span<const std::uint8_t> bytes) {
  try {
    const matchmaking::Announcement a = matchmaking::decode_announcement(bytes);
    const planner::PeerCapacity& c = a.capacity;
    for (double r : {c.compute_sps, c.download_bps, c.upload_bps})
      if (!(r >= 0) || !std::isfinite(r)) std::abort();
    const std::vector<std::uint8_t> again = matchmaking::encode_announcement(a);
    if (!std::equal(again.begin(), again.end(), bytes.begin(), bytes.end())) std::abort();
  } catch (const DecodeError&) {
  }
}

// A declaration's subkey (the declaring peer, read from whatever the DHT returns): exactly four
// bytes that encode back to themselves.
void check_peer_subkey(std::span<const std::uint8_t> bytes) {
  try {
    const PeerId peer = matchmaking::decode_peer_subkey(bytes);
    const std::vector<std::uint8_t> again = matchmaking::peer_subkey(peer);
    if (!std::equal(again.begin(), again.end(), bytes.begin(), bytes.end())) std::abort();
  } catch (const DecodeError&) {
  }
}

void dispatch(std::span<const std::uint8_t> in) {
  if (in.empty()) return;
  const std::span<const std::uint8_t> rest = in.subspan(1);
  switch (in[0] % 5) {
    case 0: return check_matchmaking(rest);
    case 1: return check_declaration(rest);
    case 2: return check_part(rest);
    case 3: return check_announcement(rest);
    default: return check_peer_subkey(rest);
  }
}

}  // namespace

#ifndef GROUP_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dispatch(std::span<const std::uint8_t>(data, size));
  return 0;
}

#else

#include <string>

#include "tests/fuzz/corpus_writer.h"

// One seed per decoder and message shape, each prefixed with its selector byte.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  using swarmlab::fuzz::with_selector;
  matchmaking::MatchmakingMessage join;
  join.kind = matchmaking::MessageKind::JoinRequest;
  join.request_id = 7;
  join.group_key = "run_averaging.0101";
  join.gathered = {1, 2, 3};
  corpus.write("join_request", with_selector(0, matchmaking::encode(join)));
  matchmaking::MatchmakingMessage begin;
  begin.kind = matchmaking::MessageKind::Begin;
  begin.request_id = 7;
  begin.group_id = 99;
  begin.leader = 1;
  begin.members = {{1, false, {4}}, {2, true, {}}};
  corpus.write("begin", with_selector(0, matchmaking::encode(begin)));
  matchmaking::Declaration d;
  d.expiration = 12.5;
  d.looking = true;
  corpus.write("declaration", with_selector(1, matchmaking::encode_declaration(d)));
  averaging::PartHeader h;
  h.round_id = 5;
  h.part = 2;
  h.weight = 3;
  h.elements = 4;
  h.codec = codec::Codec::Fp16;
  const std::vector<float> values = {1, -2, 0.5f, 8};
  Message real = averaging::encode_part(h, values, false);
  std::vector<std::uint8_t> part = {0};
  part.insert(part.end(), real.bytes.begin(), real.bytes.end());
  corpus.write("part", with_selector(2, part));
  h.kind = averaging::PartKind::Averaged;
  Message virt = averaging::encode_part(h, {}, true);
  std::vector<std::uint8_t> averaged = {1, static_cast<std::uint8_t>(virt.virtual_bytes), 0, 0, 0};
  averaged.insert(averaged.end(), virt.bytes.begin(), virt.bytes.end());
  corpus.write("averaged_virtual", with_selector(2, averaged));
  planner::PeerCapacity capacity;
  capacity.compute_sps = 400;
  capacity.download_bps = 1e8;
  capacity.upload_bps = 5e7;
  capacity.client_mode = true;
  corpus.write("announcement", with_selector(3, matchmaking::encode_announcement({capacity})));
  corpus.write("announcement_with_state", with_selector(3, matchmaking::encode_announcement({capacity, 1234})));
  corpus.write("peer_subkey", with_selector(4, matchmaking::peer_subkey(70000)));
  return corpus.done();
}

#endif
