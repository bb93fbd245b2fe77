// The local training loop and the state-download messages.
#include "core/training/trainer.h"

#include <gtest/gtest.h>

#include "core/training/state_messages.h"
#include "core/wire.h"
#include "support/memory_world.h"
#include "support/timed_learner.h"

namespace swarmlab::core::training {
namespace {

struct OnePeer {
  core::testing::MemoryWorld world{1, core::testing::PeerSpec{0, 1e9, /*compute_sps=*/10}};
};

using core::testing::TimedLearner;

TEST(Trainer, ComputesMicroBatchesAtItsSpeedAndPausesAfterTheOneInFlight) {
  OnePeer w;
  TimedLearner learner(w.world.env(0));
  std::uint64_t seen = 0;
  Trainer t(learner, {4, 0}, [&](std::uint64_t n) { seen += n; });
  t.resume();
  w.world.run_until(1.0);  // 10 samples/s: micro-batches of 4 done at 0.4 and 0.8 s
  EXPECT_EQ(t.accumulated(), 8u);
  t.pause();
  w.world.run_until(5.0);  // the one in flight (0.8 .. 1.2 s) still lands
  EXPECT_EQ(t.take(), 12u);
  EXPECT_EQ(t.accumulated(), 0u);
  EXPECT_NEAR(learner.compute_seconds(), 1.2, 1e-9);
  t.resume();
  w.world.run_until(6.0);
  EXPECT_EQ(seen, 20u);
}

TEST(Trainer, StopsExactlyAtItsQuota) {
  OnePeer w;
  TimedLearner learner(w.world.env(0));
  Trainer t(learner, {4, 10}, [](std::uint64_t) {});
  t.resume();
  w.world.run_until(100);
  EXPECT_EQ(t.accumulated(), 10u);  // 4 + 4 + 2
  EXPECT_TRUE(t.quota_reached());
  EXPECT_NEAR(learner.compute_seconds(), 1.0, 1e-9);
}

TEST(StateMessages, RoundTripAndRejectMalformed) {
  StateMessage h;
  h.kind = StateKind::Header;
  h.request_id = 7;
  h.step = 42, h.lineage = 0xfedcba9876543210ULL, h.total_bytes = 1000, h.chunks = 16;
  const StateMessage back = decode_state(encode_state(h));
  EXPECT_EQ(back.step, 42u);
  EXPECT_EQ(back.lineage, h.lineage);
  EXPECT_EQ(back.total_bytes, 1000u);
  EXPECT_EQ(back.chunks, 16u);
  StateMessage c;
  c.kind = StateKind::Chunk;
  c.request_id = 7;
  c.index = 3, c.bytes = 65536, c.virtual_payload = true;
  Message m = encode_state(c);
  EXPECT_EQ(m.virtual_bytes, 65536u);
  EXPECT_EQ(decode_state(m).index, 3u);
  m.virtual_bytes = 10;
  EXPECT_THROW(decode_state(m), DecodeError);
  Message truncated = encode_state(h);
  truncated.bytes.pop_back();
  EXPECT_THROW(decode_state(truncated), DecodeError);
  // A carried payload travels in the bytes; one byte short is malformed.
  StateMessage real = c;
  real.virtual_payload = false;
  real.bytes = 5;
  real.payload = {1, 2, 3, 4, 5};
  Message carried = encode_state(real);
  EXPECT_EQ(carried.virtual_bytes, 0u);
  EXPECT_EQ(decode_state(carried).payload, real.payload);
  carried.bytes.pop_back();
  EXPECT_THROW(decode_state(carried), DecodeError);
  // Asking for the steps since a state, and the refusal.
  StateMessage u;
  u.kind = StateKind::UpdatesRequest;
  u.request_id = 8, u.step = 40, u.lineage = 0x1234;
  const StateMessage u_back = decode_state(encode_state(u));
  EXPECT_EQ(u_back.kind, StateKind::UpdatesRequest);
  EXPECT_EQ(u_back.step, 40u);
  EXPECT_EQ(u_back.lineage, 0x1234u);
  StateMessage no;
  no.kind = StateKind::Refused;
  no.request_id = 8;
  Message refused = encode_state(no);
  EXPECT_EQ(decode_state(refused).kind, StateKind::Refused);
  refused.bytes[1] = 6;  // no such kind
  EXPECT_THROW(decode_state(refused), DecodeError);
}

}  // namespace
}  // namespace swarmlab::core::training
