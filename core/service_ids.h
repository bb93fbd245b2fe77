#pragma once
// The first byte of every protocol message names the service it belongs to, so one peer can host
// several services behind a single ServiceMux and route each message by peeking at that byte.
#include <cstdint>
#include <optional>
#include <span>

namespace swarmlab::core {

// 0xFF is reserved: the live binding's address directory frames (exec/address_directory.h) share
// the connections with these messages.
enum class ServiceId : std::uint8_t { Dht = 1, Averaging = 2, Matchmaking = 3, Progress = 4, State = 5, Raft = 6, Experts = 7, AllReduce = 8, Tracker = 9, Bootstrap = 10 };

// The service byte of an encoded message; nullopt for an empty message.
inline std::optional<ServiceId> peek_service(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return std::nullopt;
  return static_cast<ServiceId>(bytes[0]);
}

}  // namespace swarmlab::core
