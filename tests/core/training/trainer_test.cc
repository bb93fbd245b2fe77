// The local training loop and the state-download messages.
#include "core/training/trainer.h"

#include <gtest/gtest.h>

#include "core/training/state_messages.h"
#include "core/wire.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/sim_world.h"

namespace swarmlab::core::training {
namespace {

struct OnePeer {
  sim::Engine engine;
  sim::FlowNetwork network{engine, {{1e9, 1e9, 0}}};
  sim::SimWorld world{engine, network, {{"gpu", 10}}, 1};
};

TEST(Trainer, ComputesMicroBatchesAtItsSpeedAndPausesAfterTheOneInFlight) {
  OnePeer w;
  std::uint64_t seen = 0;
  Trainer t(w.world.env(0), {4, 0}, [&](std::uint64_t n) { seen += n; });
  t.resume();
  w.engine.run_until(1.0);  // 10 samples/s: micro-batches of 4 done at 0.4 and 0.8 s
  EXPECT_EQ(t.accumulated(), 8u);
  t.pause();
  w.engine.run_until(5.0);  // the one in flight (0.8 .. 1.2 s) still lands
  EXPECT_EQ(t.take(), 12u);
  EXPECT_EQ(t.accumulated(), 0u);
  EXPECT_NEAR(t.compute_time(), 1.2, 1e-9);
  t.resume();
  w.engine.run_until(6.0);
  EXPECT_EQ(seen, 20u);
}

TEST(Trainer, StopsExactlyAtItsQuota) {
  OnePeer w;
  Trainer t(w.world.env(0), {4, 10}, [](std::uint64_t) {});
  t.resume();
  w.engine.run_until(100);
  EXPECT_EQ(t.accumulated(), 10u);  // 4 + 4 + 2
  EXPECT_TRUE(t.quota_reached());
  EXPECT_NEAR(t.compute_time(), 1.0, 1e-9);
}

TEST(StateMessages, RoundTripAndRejectMalformed) {
  StateMessage h{StateKind::Header, 7};
  h.step = 42, h.total_bytes = 1000, h.chunks = 16;
  const StateMessage back = decode_state(encode_state(h));
  EXPECT_EQ(back.step, 42u);
  EXPECT_EQ(back.total_bytes, 1000u);
  EXPECT_EQ(back.chunks, 16u);
  StateMessage c{StateKind::Chunk, 7};
  c.index = 3, c.bytes = 65536;
  Message m = encode_state(c);
  EXPECT_EQ(m.virtual_bytes, 65536u);
  EXPECT_EQ(decode_state(m).index, 3u);
  m.virtual_bytes = 10;
  EXPECT_THROW(decode_state(m), DecodeError);
  Message truncated = encode_state(h);
  truncated.bytes.pop_back();
  EXPECT_THROW(decode_state(truncated), DecodeError);
}

}  // namespace
}  // namespace swarmlab::core::training
