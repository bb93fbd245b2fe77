// The live round barrier: its messages and the coordinator's decisions.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "core/service_ids.h"
#include "core/wire.h"
#include "exec/member_plan.h"
#include "exec/round_coordinator.h"
#include "exec/round_messages.h"

namespace swarmlab::exec {
namespace {

// Timers only, advanced by hand.
class ManualEnv final : public core::Environment {
 public:
  core::PeerId self() const override { return 0; }
  core::Seconds now() const override { return now_; }
  core::TimerHandle schedule(core::Seconds delay, std::function<void()> fn) override {
    timers_.emplace(std::make_pair(now_ + delay, next_), std::move(fn));
    return next_++;
  }
  void cancel(core::TimerHandle h) override {
    for (auto it = timers_.begin(); it != timers_.end(); ++it)
      if (it->first.second == h) {
        timers_.erase(it);
        return;
      }
  }
  void send(core::PeerId, core::Message) override {}
  void set_pacing(core::PeerId, double) override {}
  void set_sink(core::MessageSink*) override {}
  core::TimerHandle compute(std::uint64_t, std::function<void()>) override { return 0; }
  core::Rng& rng() override { return rng_; }
  void advance(double dt) {
    const double end = now_ + dt;
    while (!timers_.empty() && timers_.begin()->first.first <= end) {
      auto node = timers_.extract(timers_.begin());
      now_ = node.key().first;
      node.mapped()();
    }
    now_ = end;
  }

 private:
  double now_ = 0;
  core::TimerHandle next_ = 1;
  std::map<std::pair<double, core::TimerHandle>, std::function<void()>> timers_;
  core::Rng rng_;
};

Announce gpu() { return {100, 1e9, 1e9, false}; }

TEST(RoundMessages, RoundTrip) {
  ReadyMsg ready{77, 3, {10, 2e8, 1e8, true}};
  const auto r = std::get<ReadyMsg>(decode_round_message(encode_round_message(ready), 8));
  EXPECT_EQ(r.incarnation, 77u);
  EXPECT_EQ(r.next_round, 3u);
  EXPECT_EQ(r.announce, ready.announce);
  StartMsg start{5, {{0, gpu()}, {3, {0, 1e9, 1e9, false}}}};
  const auto s = std::get<StartMsg>(decode_round_message(encode_round_message(start), 8));
  EXPECT_EQ(s.round, 5u);
  ASSERT_EQ(s.members.size(), 2u);
  EXPECT_EQ(s.members[1].first, 3u);
  EXPECT_TRUE(std::holds_alternative<DoneMsg>(decode_round_message(encode_round_message(DoneMsg{}), 8)));
}

TEST(RoundMessages, GarbageAndInconsistentStartsAreRejected) {
  std::mt19937 gen(11);
  for (int i = 0; i < 3000; ++i) {
    core::Message m;
    m.bytes.resize(gen() % 64);
    for (auto& b : m.bytes) b = static_cast<std::uint8_t>(gen());
    if (!m.bytes.empty() && gen() % 2) m.bytes[0] = static_cast<std::uint8_t>(kRoundBarrierService);
    try {
      decode_round_message(m, 8);
    } catch (const core::DecodeError&) {
    }
  }
  EXPECT_THROW(decode_round_message(encode_round_message(StartMsg{1, {{3, gpu()}, {1, gpu()}}}), 8), core::DecodeError);
  EXPECT_THROW(decode_round_message(encode_round_message(StartMsg{1, {{9, gpu()}}}), 8), core::DecodeError);
  EXPECT_THROW(decode_round_message(encode_round_message(ReadyMsg{1, 0, {-1, 0, 0, false}}), 8), core::DecodeError);
}

struct Recorder {
  std::vector<std::pair<core::PeerId, RoundMessage>> sent;
  std::vector<StartMsg> starts() const {
    std::map<std::uint64_t, StartMsg> by_round;
    for (const auto& [to, m] : sent)
      if (const auto* s = std::get_if<StartMsg>(&m)) by_round[s->round] = *s;
    std::vector<StartMsg> out;
    for (auto& [r, s] : by_round) out.push_back(s);
    return out;
  }
  std::size_t dones() const {
    std::size_t k = 0;
    for (const auto& [to, m] : sent) k += std::holds_alternative<DoneMsg>(m);
    return k;
  }
};

TEST(RoundCoordinator, StartsWhenEveryoneIsReadyAndEndsWithDone) {
  ManualEnv env;
  Recorder rec;
  RoundCoordinator c(env, {3, 2, 30, 3}, [&](core::PeerId to, const RoundMessage& m) { rec.sent.emplace_back(to, m); });
  for (core::PeerId p = 0; p < 3; ++p) c.on_ready(p, {100 + p, 0, gpu()});
  ASSERT_EQ(rec.starts().size(), 1u);
  EXPECT_EQ(rec.starts()[0].members.size(), 3u);
  for (core::PeerId p = 0; p < 3; ++p) c.on_ready(p, {100 + p, 1, gpu()});
  ASSERT_EQ(rec.starts().size(), 2u);
  for (core::PeerId p = 0; p < 3; ++p) c.on_ready(p, {100 + p, 2, gpu()});
  EXPECT_EQ(rec.dones(), 3u);
  EXPECT_TRUE(c.finished());
}

TEST(RoundCoordinator, AMissingPeerDelaysARoundByTheBarrierTimeoutOnly) {
  ManualEnv env;
  Recorder rec;
  RoundCoordinator c(env, {3, 5, 30, 3}, [&](core::PeerId to, const RoundMessage& m) { rec.sent.emplace_back(to, m); });
  for (core::PeerId p = 0; p < 3; ++p) c.on_ready(p, {100 + p, 0, gpu()});
  c.on_ready(0, {100, 1, gpu()});
  c.on_ready(1, {101, 1, gpu()});
  env.advance(10);  // peer 2 is still busy in round 0: waited for, however long it takes
  EXPECT_EQ(rec.starts().size(), 1u);
  c.on_link_failure(2);  // ... until it dies
  env.advance(2.9);
  EXPECT_EQ(rec.starts().size(), 1u);
  env.advance(0.2);
  ASSERT_EQ(rec.starts().size(), 2u);
  EXPECT_EQ(rec.starts()[1].members.size(), 2u);
  // Peer 2 comes back as a new process: it is in the next round.
  c.on_ready(2, {999, 0, gpu()});
  c.on_ready(0, {100, 2, gpu()});
  c.on_ready(1, {101, 2, gpu()});
  ASSERT_EQ(rec.starts().size(), 3u);
  EXPECT_EQ(rec.starts()[2].members.size(), 3u);
}

TEST(RoundCoordinator, AReadyThatCrossedAStartDoesNotCountTwice) {
  ManualEnv env;
  Recorder rec;
  RoundCoordinator c(env, {2, 5, 30, 3, 60}, [&](core::PeerId to, const RoundMessage& m) { rec.sent.emplace_back(to, m); });
  c.on_ready(0, {1, 0, gpu()});
  c.on_ready(1, {2, 0, gpu()});
  ASSERT_EQ(rec.starts().size(), 1u);
  c.on_ready(1, {2, 0, gpu()});  // a repeat sent before Start arrived
  c.on_ready(0, {1, 1, gpu()});
  env.advance(70);  // peer 1 stays busy past busy_timeout (60 s), then the barrier timeout
  // Round 1 started with peer 0 alone: the stale Ready did not put busy peer 1 in it.
  ASSERT_EQ(rec.starts().size(), 2u);
  EXPECT_EQ(rec.starts()[1].members.size(), 1u);
}

TEST(RoundCoordinator, TheLastRoundEndsWithDoneOnlyWhenNobodyIsBusy) {
  ManualEnv env;
  Recorder rec;
  RoundCoordinator c(env, {3, 1, 30, 3}, [&](core::PeerId to, const RoundMessage& m) { rec.sent.emplace_back(to, m); });
  for (core::PeerId p = 0; p < 3; ++p) c.on_ready(p, {100 + p, 0, gpu()});
  c.on_ready(2, {102, 1, gpu()});  // e.g. a member with nothing to do this round
  env.advance(30);
  EXPECT_EQ(rec.dones(), 0u);  // 0 and 1 are still averaging
  c.on_ready(0, {100, 1, gpu()});
  c.on_ready(1, {101, 1, gpu()});
  EXPECT_EQ(rec.dones(), 3u);
}

TEST(MemberPlan, EveryMemberComputesTheSamePlanWithPeerIds) {
  // Setup D in small: slow GPU peers gain from a fast CPU-only aggregator.
  const Announce slow{70, 2e8, 2e8, false};
  StartMsg start{7, {{1, slow}, {2, slow}, {4, {0, 2.5e9, 2.5e9, false}}, {5, slow}, {6, slow}}};
  PlanInputs in;
  in.strategy = core::averaging::Strategy::Planned;
  in.length = 100000;
  in.codec = core::codec::Codec::Fp16;
  const auto a = member_plan(start, in);
  const auto b = member_plan(start, in);
  EXPECT_EQ(a.members, (std::vector<core::PeerId>{1, 2, 4, 5, 6}));
  EXPECT_EQ(a.span_begin, b.span_begin);
  EXPECT_EQ(a.round_id, 7u);
  EXPECT_EQ(a.weights[2], 0);  // the CPU peer reduces but sends nothing
  EXPECT_GT(a.span_length(2), 0u);
  in.strategy = core::averaging::Strategy::AllReduce;
  const auto ar = member_plan(start, in);
  EXPECT_EQ(ar.members, (std::vector<core::PeerId>{1, 2, 5, 6}));
}

}  // namespace
}  // namespace swarmlab::exec
