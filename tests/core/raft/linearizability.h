#pragma once
// A linearizability checker for key-value histories, after Wing & Gong: search for a total order of
// the operations that respects real time (an operation that returned before another was invoked
// comes first) and that a single sequential key-value store would produce, with Lowe's
// memoisation (a set of already explored (linearized operations, state) pairs). Operations on
// different keys never constrain each other, so each key is checked on its own (linearizability is
// local: a history is linearizable iff every per-object sub-history is).
//
// An operation without a response (the client was still waiting when the history ended) may have
// taken effect or not, and its result is unconstrained: it never has to be linearized, and if it
// is, any result is accepted.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/raft/kv_state_machine.h"

namespace swarmlab::core::raft::testing {

struct KvOperation {
  static constexpr std::uint64_t kPending = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t client = 0;
  KvOp op = KvOp::Get;
  std::string key, value, expected;
  std::uint64_t call = 0;          // position of the invocation in the history's event order
  std::uint64_t ret = kPending;    // position of the response; kPending if none
  KvResult result;                 // meaningful only when ret != kPending
  bool completed() const { return ret != kPending; }
};

class LinearizabilityChecker {
 public:
  // True if the history is linearizable; otherwise `why` names the first key that is not.
  static bool check(const std::vector<KvOperation>& history, std::string* why = nullptr) {
    std::map<std::string, std::vector<const KvOperation*>> by_key;
    for (const KvOperation& op : history) by_key[op.key].push_back(&op);
    for (auto& [key, ops] : by_key) {
      KeySearch search(ops);
      if (!search.run()) {
        if (why) *why = "key '" + key + "' (" + std::to_string(ops.size()) + " operations) is not linearizable";
        return false;
      }
    }
    return true;
  }

 private:
  class KeySearch {
   public:
    explicit KeySearch(std::vector<const KvOperation*> ops) : ops_(std::move(ops)) {
      std::sort(ops_.begin(), ops_.end(), [](const KvOperation* a, const KvOperation* b) { return a->call < b->call; });
      words_ = (ops_.size() + 63) / 64;
      for (const KvOperation* op : ops_) {
        intern(op->value);
        intern(op->expected);
        if (op->completed() && op->result.value) intern(*op->result.value);
        if (op->completed()) ++completed_;
      }
    }

    bool run() {
      std::vector<std::uint64_t> done(words_, 0);
      return search(done, 0, kAbsent);
    }

   private:
    static constexpr int kAbsent = -1;

    int intern(const std::string& s) {
      auto [it, inserted] = ids_.emplace(s, static_cast<int>(ids_.size()));
      return it->second;
    }
    int id(const std::string& s) const { return ids_.at(s); }
    static bool is_done(const std::vector<std::uint64_t>& d, std::size_t i) { return (d[i / 64] >> (i % 64)) & 1u; }

    // Applies ops_[i] to `state`; false if its recorded result contradicts a sequential store.
    bool step(std::size_t i, int state, int& next) const {
      const KvOperation& op = *ops_[i];
      const bool known = op.completed();
      switch (op.op) {
        case KvOp::Put:
          next = id(op.value);
          return !known || op.result.status == KvStatus::Ok;
        case KvOp::Get:
          next = state;
          if (!known) return true;
          if (op.result.status != KvStatus::Ok) return false;
          return op.result.value ? state == id(*op.result.value) : state == kAbsent;
        case KvOp::Cas:
          if (state != kAbsent && state == id(op.expected)) {
            next = id(op.value);
            return !known || op.result.status == KvStatus::Ok;
          }
          next = state;
          return !known || op.result.status == KvStatus::CasFailed;
      }
      return false;
    }

    bool search(std::vector<std::uint64_t>& done, std::size_t linearized_completed, int state) {
      if (linearized_completed == completed_) return true;
      std::string memo(reinterpret_cast<const char*>(done.data()), done.size() * 8);
      memo.append(reinterpret_cast<const char*>(&state), sizeof state);
      if (!seen_.insert(std::move(memo)).second) return false;
      // The next operation must have been invoked before every pending operation returned.
      std::uint64_t min_ret = KvOperation::kPending;
      for (std::size_t i = 0; i < ops_.size(); ++i)
        if (!is_done(done, i)) min_ret = std::min(min_ret, ops_[i]->ret);
      for (std::size_t i = 0; i < ops_.size() && ops_[i]->call < min_ret; ++i) {
        if (is_done(done, i)) continue;
        int next = state;
        if (!step(i, state, next)) continue;
        done[i / 64] |= 1ull << (i % 64);
        const bool ok = search(done, linearized_completed + (ops_[i]->completed() ? 1 : 0), next);
        done[i / 64] &= ~(1ull << (i % 64));
        if (ok) return true;
      }
      return false;
    }

    std::vector<const KvOperation*> ops_;
    std::size_t words_ = 0;
    std::size_t completed_ = 0;
    std::map<std::string, int> ids_;
    std::unordered_set<std::string> seen_;
  };
};

}  // namespace swarmlab::core::raft::testing
