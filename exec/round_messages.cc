#include "exec/round_messages.h"

#include <cmath>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::exec {
namespace {

constexpr std::uint8_t kReady = 1, kStart = 2, kDone = 3;
constexpr std::size_t kAnnounceBytes = 8 * 3 + 1;

void write_announce(core::Writer& w, const Announce& a) {
  w.f64(a.compute_sps);
  w.f64(a.download_bps);
  w.f64(a.upload_bps);
  w.u8(a.client_mode ? 1 : 0);
}

Announce read_announce(core::Reader& r) {
  Announce a;
  a.compute_sps = r.f64();
  a.download_bps = r.f64();
  a.upload_bps = r.f64();
  const std::uint8_t client = r.u8();
  for (double v : {a.compute_sps, a.download_bps, a.upload_bps})
    if (!(v >= 0) || !std::isfinite(v)) throw core::DecodeError("announce: rates must be finite and >= 0");
  if (client > 1) throw core::DecodeError("announce: bad client flag");
  a.client_mode = client == 1;
  return a;
}

}  // namespace

core::Message encode_round_message(const RoundMessage& m) {
  core::Message out;
  core::Writer w(out.bytes);
  w.u8(static_cast<std::uint8_t>(kRoundBarrierService));
  if (const auto* ready = std::get_if<ReadyMsg>(&m)) {
    w.u8(kReady);
    w.u64(ready->incarnation);
    w.u64(ready->next_round);
    write_announce(w, ready->announce);
  } else if (const auto* start = std::get_if<StartMsg>(&m)) {
    w.u8(kStart);
    w.u64(start->round);
    w.varint(start->members.size());
    for (const auto& [peer, a] : start->members) {
      w.u32(peer);
      write_announce(w, a);
    }
  } else {
    w.u8(kDone);
  }
  return out;
}

RoundMessage decode_round_message(const core::Message& m, std::size_t max_peers) {
  core::Reader r(m.bytes);
  if (r.u8() != static_cast<std::uint8_t>(kRoundBarrierService)) throw core::DecodeError("not a round message");
  const std::uint8_t kind = r.u8();
  RoundMessage result;
  if (kind == kReady) {
    ReadyMsg ready;
    ready.incarnation = r.u64();
    ready.next_round = r.u64();
    ready.announce = read_announce(r);
    result = ready;
  } else if (kind == kStart) {
    StartMsg start;
    start.round = r.u64();
    const std::size_t count = r.count(4 + kAnnounceBytes);
    if (count == 0 || count > max_peers) throw core::DecodeError("start: bad member count");
    for (std::size_t i = 0; i < count; ++i) {
      const core::PeerId peer = r.u32();
      if (peer >= max_peers || (i > 0 && peer <= start.members.back().first))
        throw core::DecodeError("start: member ids must be known and ascending");
      start.members.emplace_back(peer, read_announce(r));
    }
    result = std::move(start);
  } else if (kind == kDone) {
    result = DoneMsg{};
  } else {
    throw core::DecodeError("unknown round message kind");
  }
  r.finish();
  return result;
}

}  // namespace swarmlab::exec
