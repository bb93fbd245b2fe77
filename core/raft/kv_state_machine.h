#pragma once
// A key-value store as a replicated state machine: put, get and compare-and-set, with client
// sessions for exactly-once execution. Used by the Raft tests and the fuzz target; a tracker's
// metadata store (docs/hydra.md §2) has the same shape.
//
// Command = u8 op, varint client, varint seq, str key, then
//   Put: str value      Get: (nothing)      Cas: str expected, str value
// Result  = u8 status (KvStatus), then for Get with status Ok: u8 found, [str value].
//
// Each client numbers its commands 1, 2, 3, … and has at most one outstanding; a command whose seq
// is not above the client's last applied one is not executed again: the same seq gets the cached
// result (a retry after a lost reply), an older one gets Stale. That is what makes a client's
// retries safe when a leader fails after committing but before answering.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "core/raft/state_machine.h"

namespace swarmlab::core::raft {

enum class KvOp : std::uint8_t { Put = 1, Get = 2, Cas = 3 };

enum class KvStatus : std::uint8_t {
  Ok = 1,         // put done; get answered; cas swapped
  CasFailed = 2,  // cas: the key was absent or held another value
  Stale = 3,      // a seq older than the client's last one: not executed
  Malformed = 4,  // the command did not decode
};

struct KvCommand {
  KvOp op = KvOp::Get;
  std::uint64_t client = 0;
  std::uint64_t seq = 0;
  std::string key;
  std::string value;     // Put, Cas (the new value)
  std::string expected;  // Cas
  friend bool operator==(const KvCommand&, const KvCommand&) = default;
};

struct KvResult {
  KvStatus status = KvStatus::Ok;
  std::optional<std::string> value;  // Get
  friend bool operator==(const KvResult&, const KvResult&) = default;
};

Bytes encode_kv_command(const KvCommand& c);
// Throws DecodeError.
KvCommand decode_kv_command(std::span<const std::uint8_t> bytes);
Bytes encode_kv_result(const KvResult& r);
// Throws DecodeError.
KvResult decode_kv_result(std::span<const std::uint8_t> bytes);

class KvStateMachine final : public StateMachine {
 public:
  Bytes apply(std::span<const std::uint8_t> command) override;
  Bytes snapshot() const override;
  void restore(std::span<const std::uint8_t> snapshot) override;

  const std::map<std::string, std::string>& data() const { return data_; }
  std::uint64_t applied() const { return applied_; }

 private:
  struct Session {
    std::uint64_t last_seq = 0;
    Bytes last_result;
  };
  std::map<std::string, std::string> data_;
  std::map<std::uint64_t, Session> sessions_;
  std::uint64_t applied_ = 0;  // commands executed (not counting duplicates), for tests
};

}  // namespace swarmlab::core::raft
