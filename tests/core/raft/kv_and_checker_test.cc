// The key-value state machine (exactly-once sessions, snapshots) and the linearizability checker.
#include <gtest/gtest.h>

#include "core/raft/kv_state_machine.h"
#include "core/wire.h"
#include "linearizability.h"

namespace swarmlab::core::raft {
namespace {

KvResult run(KvStateMachine& kv, KvCommand c) { return decode_kv_result(kv.apply(encode_kv_command(c))); }

TEST(KvStateMachine, PutGetCas) {
  KvStateMachine kv;
  EXPECT_EQ(run(kv, {KvOp::Get, 1, 1, "x", "", ""}), (KvResult{KvStatus::Ok, std::nullopt}));
  EXPECT_EQ(run(kv, {KvOp::Put, 1, 2, "x", "a", ""}).status, KvStatus::Ok);
  EXPECT_EQ(run(kv, {KvOp::Get, 1, 3, "x", "", ""}), (KvResult{KvStatus::Ok, "a"}));
  EXPECT_EQ(run(kv, {KvOp::Cas, 1, 4, "x", "b", "zzz"}).status, KvStatus::CasFailed);
  EXPECT_EQ(run(kv, {KvOp::Cas, 1, 5, "x", "b", "a"}).status, KvStatus::Ok);
  EXPECT_EQ(run(kv, {KvOp::Cas, 1, 6, "absent", "b", ""}).status, KvStatus::CasFailed);
  EXPECT_EQ(kv.data().at("x"), "b");
  EXPECT_EQ(decode_kv_result(kv.apply(Bytes{9, 9})).status, KvStatus::Malformed);
}

TEST(KvStateMachine, SessionsMakeRetriesExactlyOnce) {
  KvStateMachine kv;
  ASSERT_EQ(run(kv, {KvOp::Put, 7, 1, "x", "1", ""}).status, KvStatus::Ok);
  ASSERT_EQ(run(kv, {KvOp::Put, 8, 1, "x", "2", ""}).status, KvStatus::Ok);
  // Client 7's retry of seq 1 (say its reply was lost) must not overwrite client 8's put.
  EXPECT_EQ(run(kv, {KvOp::Put, 7, 1, "x", "1", ""}).status, KvStatus::Ok);
  EXPECT_EQ(kv.data().at("x"), "2");
  // A retried cas returns its first result, not a fresh evaluation.
  ASSERT_EQ(run(kv, {KvOp::Cas, 7, 2, "x", "3", "2"}).status, KvStatus::Ok);
  EXPECT_EQ(run(kv, {KvOp::Cas, 7, 2, "x", "3", "2"}).status, KvStatus::Ok);
  EXPECT_EQ(run(kv, {KvOp::Put, 7, 1, "x", "old", ""}).status, KvStatus::Stale);
  EXPECT_EQ(kv.data().at("x"), "3");
  EXPECT_EQ(kv.applied(), 3u);
}

TEST(KvStateMachine, SnapshotRestoresStateAndSessions) {
  KvStateMachine kv;
  run(kv, {KvOp::Put, 1, 1, "a", "x", ""});
  run(kv, {KvOp::Put, 2, 1, "b", "y", ""});
  const Bytes snap = kv.snapshot();
  KvStateMachine other;
  other.restore(snap);
  EXPECT_EQ(other.data(), kv.data());
  EXPECT_EQ(other.snapshot(), snap);
  EXPECT_EQ(run(other, {KvOp::Put, 1, 1, "a", "x", ""}).status, KvStatus::Ok);  // a retry: cached
  EXPECT_EQ(other.applied(), kv.applied());
  // A malformed snapshot throws and leaves the state alone.
  for (std::size_t n = 0; n < snap.size(); ++n) {
    Bytes cut(snap.begin(), snap.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(other.restore(cut), DecodeError);
  }
  EXPECT_EQ(other.data(), kv.data());
}

using testing::KvOperation;
using testing::LinearizabilityChecker;

KvOperation op(KvOp kind, std::string key, std::string value, std::uint64_t call, std::uint64_t ret, KvResult res,
               std::string expected = "") {
  KvOperation o;
  o.op = kind;
  o.key = std::move(key);
  o.value = std::move(value);
  o.expected = std::move(expected);
  o.call = call;
  o.ret = ret;
  o.result = std::move(res);
  return o;
}
const KvResult kOk{KvStatus::Ok, std::nullopt};
KvResult got(std::optional<std::string> v) { return {KvStatus::Ok, std::move(v)}; }

TEST(Linearizability, SequentialAndConcurrentHistories) {
  // put(x,1) then get(x) -> 1: fine; -> absent: not linearizable.
  EXPECT_TRUE(LinearizabilityChecker::check({op(KvOp::Put, "x", "1", 1, 2, kOk), op(KvOp::Get, "x", "", 3, 4, got("1"))}));
  EXPECT_FALSE(
      LinearizabilityChecker::check({op(KvOp::Put, "x", "1", 1, 2, kOk), op(KvOp::Get, "x", "", 3, 4, got({}))}));
  // A get concurrent with the put may see either.
  EXPECT_TRUE(LinearizabilityChecker::check({op(KvOp::Put, "x", "1", 1, 3, kOk), op(KvOp::Get, "x", "", 2, 4, got({}))}));
  EXPECT_TRUE(LinearizabilityChecker::check({op(KvOp::Put, "x", "1", 1, 3, kOk), op(KvOp::Get, "x", "", 2, 4, got("1"))}));
  // Two reads that disagree on the order of two writes.
  EXPECT_FALSE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "1", 1, 6, kOk),
      op(KvOp::Put, "x", "2", 2, 7, kOk),
      op(KvOp::Get, "x", "", 3, 4, got("1")),
      op(KvOp::Get, "x", "", 5, 8, got("2")),
      op(KvOp::Get, "x", "", 9, 10, got("1")),
  }));
  // A stale read after a completed write.
  EXPECT_FALSE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "1", 1, 2, kOk),
      op(KvOp::Put, "x", "2", 3, 4, kOk),
      op(KvOp::Get, "x", "", 5, 6, got("1")),
  }));
  // Keys are independent.
  EXPECT_TRUE(LinearizabilityChecker::check({op(KvOp::Put, "x", "1", 1, 2, kOk), op(KvOp::Get, "y", "", 3, 4, got({}))}));
}

TEST(Linearizability, CasAndPendingOperations) {
  // cas succeeded, so the put it expected came first.
  EXPECT_TRUE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "1", 1, 4, kOk),
      op(KvOp::Cas, "x", "2", 2, 3, kOk, "1"),
      op(KvOp::Get, "x", "", 5, 6, got("2")),
  }));
  EXPECT_FALSE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "1", 1, 2, kOk),
      op(KvOp::Cas, "x", "2", 3, 4, {KvStatus::CasFailed, std::nullopt}, "1"),
  }));
  // A put that never returned may explain a read...
  EXPECT_TRUE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "9", 1, KvOperation::kPending, {}),
      op(KvOp::Get, "x", "", 5, 6, got("9")),
      op(KvOp::Get, "x", "", 7, 8, got("9")),
  }));
  // ...or have no effect at all, but not take effect twice.
  EXPECT_TRUE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "9", 1, KvOperation::kPending, {}),
      op(KvOp::Get, "x", "", 5, 6, got({})),
  }));
  EXPECT_FALSE(LinearizabilityChecker::check({
      op(KvOp::Put, "x", "9", 1, KvOperation::kPending, {}),
      op(KvOp::Put, "x", "1", 2, 3, kOk),
      op(KvOp::Get, "x", "", 4, 5, got("9")),
      op(KvOp::Get, "x", "", 6, 7, got("1")),
  }));
}

TEST(Linearizability, LongHistoriesAreFast) {
  // 3 clients × 200 overlapping operations on one key; must finish instantly thanks to memoisation.
  std::vector<KvOperation> h;
  std::uint64_t t = 0;
  std::string last;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t base = t;
    const std::string v = std::to_string(i);
    h.push_back(op(KvOp::Put, "x", v, base + 1, base + 5, kOk));
    h.push_back(op(KvOp::Get, "x", "", base + 2, base + 6, got(i == 0 ? std::optional<std::string>{} : last)));
    h.push_back(op(KvOp::Get, "x", "", base + 3, base + 7, got(v)));
    last = v;
    t += 8;
  }
  std::string why;
  EXPECT_TRUE(LinearizabilityChecker::check(h, &why)) << why;
}

}  // namespace
}  // namespace swarmlab::core::raft
