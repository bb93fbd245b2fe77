// An expert runtime (core/dmoe/expert_runtime.h) serving trainers' ExpertClients
// (core/dmoe/expert_client.h) in the memory world: peer 0 runs the runtime with a linear backend
// (dmoe/linear_expert_backend.h), peers 1..n are trainers.
#include "core/dmoe/expert_runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "core/dmoe/expert_client.h"
#include "dmoe/linear_expert_backend.h"
#include "support/memory_world.h"

namespace swarmlab::core::dmoe {
namespace {

using core::testing::LinearExpertBackend;
using core::testing::MemoryWorld;
using core::testing::PeerSpec;

constexpr std::uint32_t kIn = 4, kOut = 3;
const ExpertUid kUid{1, 2};
const ExpertUid kOther{3, 0};

// rows × cols values, distinct per `seed`.
Tensor input(std::uint32_t rows, std::uint32_t cols, float seed) {
  Tensor t = Tensor::zeros(rows, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = seed + 0.125f * static_cast<float>(i) - 0.0625f * static_cast<float>(i * i % 7);
  return t;
}

// x·W written out here (the backend's arithmetic: double sums, one rounding).
Tensor times(const Tensor& x, const std::vector<float>& w, std::uint32_t out) {
  Tensor y = Tensor::zeros(x.rows, out);
  for (std::uint32_t r = 0; r < x.rows; ++r)
    for (std::uint32_t o = 0; o < out; ++o) {
      double s = 0;
      for (std::uint32_t i = 0; i < x.cols; ++i) s += double{x.values[r * x.cols + i]} * w[i * out + o];
      y.values[r * out + o] = static_cast<float>(s);
    }
  return y;
}

// g·Wᵀ.
Tensor times_transposed(const Tensor& g, const std::vector<float>& w, std::uint32_t in) {
  Tensor y = Tensor::zeros(g.rows, in);
  for (std::uint32_t r = 0; r < g.rows; ++r)
    for (std::uint32_t i = 0; i < in; ++i) {
      double s = 0;
      for (std::uint32_t o = 0; o < g.cols; ++o) s += double{g.values[r * g.cols + o]} * w[i * g.cols + o];
      y.values[r * in + i] = static_cast<float>(s);
    }
  return y;
}

struct Call {
  std::optional<ExpertClient::Result> result;
  int calls = 0;
  Seconds at = -1;
  bool answered() const { return result && result->output.has_value(); }
  bool refused(ExpertError e) const {
    return result && result->failure == CallFailure::Refused && result->error == e;
  }
};

struct Fixture {
  explicit Fixture(std::size_t trainers = 3, RuntimeConfig config = {}, double compute_sps = 1000)
      : world(specs(trainers, compute_sps)),
        backend(world.env(0), kIn, kOut),
        runtime(world.env(0), ExpertGrid{"ffn", 2, 4}, backend, config) {
    world.env(0).set_sink(&runtime);
    for (PeerId p = 1; p <= trainers; ++p) {
      clients.push_back(std::make_unique<ExpertClient>(world.env(p), ClientConfig{2.0, 4.0}));
      world.env(p).set_sink(clients.back().get());
    }
    runtime.host(kUid);
  }
  ~Fixture() {
    for (PeerId p = 0; p < world.size(); ++p) world.env(p).set_sink(nullptr);
  }
  static std::vector<PeerSpec> specs(std::size_t trainers, double compute_sps) {
    std::vector<PeerSpec> s(trainers + 1, PeerSpec{0.01, 0, 0});
    s[0].compute_sps = compute_sps;
    return s;
  }
  ExpertClient& client(PeerId p) { return *clients.at(p - 1); }
  ExpertClient::Done into(Call& c) {
    return [&c, this](ExpertClient::Result r) {
      ++c.calls;
      c.at = world.now();
      c.result = std::move(r);
    };
  }
  void forward(PeerId from, const ExpertUid& uid, const Tensor& x, Call& c) {
    client(from).forward(0, uid, x, kOut, into(c));
  }
  void backward(PeerId from, const ExpertUid& uid, const Tensor& x, const Tensor& g, Call& c) {
    client(from).backward(0, uid, x, g, kIn, into(c));
  }
  // Runs `fn` at absolute time t.
  void at(Seconds t, std::function<void()> fn) { world.at(t, std::move(fn)); }

  MemoryWorld world;
  LinearExpertBackend backend;
  ExpertRuntime runtime;
  std::vector<std::unique_ptr<ExpertClient>> clients;
};

const std::vector<float>& initial(const ExpertUid& uid) {
  static const auto w = LinearExpertBackend::initial_weights(kUid, kIn, kOut);
  static const auto o = LinearExpertBackend::initial_weights(kOther, kIn, kOut);
  return uid == kUid ? w : o;
}

TEST(ExpertRuntime, ForwardAnswersXTimesW) {
  Fixture f;
  const Tensor x = input(2, kIn, 0.5f);
  Call c;
  f.forward(1, kUid, x, c);
  f.world.run();
  ASSERT_TRUE(c.answered());
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(*c.result->output, times(x, initial(kUid), kOut));
  EXPECT_EQ(c.result->failure, CallFailure::None);
  // Two one-way trips of 20 ms and 2 rows at 1000 samples/s.
  EXPECT_NEAR(c.at, 0.042, 1e-9);
  const RuntimeStats& s = f.runtime.stats();
  EXPECT_EQ(s.forward_requests, 1u);
  EXPECT_EQ(s.batches, 1u);
  EXPECT_EQ(s.rows, 2u);
  EXPECT_EQ(s.replies, 1u);
  EXPECT_EQ(s.refused, 0u);
  EXPECT_EQ(f.client(1).stats().answered, 1u);
  EXPECT_EQ(f.client(1).pending(), 0u);
  EXPECT_EQ(f.world.outstanding_timers(1), 0u);  // the timeout was cancelled
}

TEST(ExpertRuntime, BackwardReturnsGTimesWTransposedAndUpdatesW) {
  Fixture f;
  const Tensor x = input(3, kIn, -0.25f);
  const Tensor g = input(3, kOut, 0.75f);
  const std::vector<float> w0 = initial(kUid);
  Call b;
  f.backward(1, kUid, x, g, b);
  f.world.run();
  ASSERT_TRUE(b.answered());
  EXPECT_EQ(*b.result->output, times_transposed(g, w0, kIn));  // with W before the update
  EXPECT_NEAR(b.at, 0.04 + 9.0 / 1000, 1e-9);                    // 3 rows charged 3 times
  const std::vector<float> w1 = LinearExpertBackend::sgd_step(w0, x, g, f.backend.lr());
  EXPECT_EQ(f.backend.weights(kUid), w1);
  // The update, spelled out for one weight: w[i][o] - lr Σ_r x[r][i] g[r][o].
  double s = 0;
  for (std::uint32_t r = 0; r < 3; ++r) s += double{x.values[r * kIn + 2]} * g.values[r * kOut + 1];
  EXPECT_NEAR(w1[2 * kOut + 1], w0[2 * kOut + 1] - 0.1 * s, 1e-6);
  EXPECT_EQ(f.runtime.stats().backward_requests, 1u);

  // A second forward sees the new weights.
  Call c;
  f.forward(2, kUid, x, c);
  f.world.run();
  ASSERT_TRUE(c.answered());
  EXPECT_EQ(*c.result->output, times(x, w1, kOut));
  EXPECT_NE(*c.result->output, times(x, w0, kOut));
}

TEST(ExpertRuntime, BatchesTheRequestsQueuedWhileTheBackendIsBusy) {
  Fixture f(3, {}, 10);  // 0.1 s per row
  std::vector<Tensor> xs{input(1, kIn, 0.0f), input(2, kIn, 1.0f), input(3, kIn, 2.0f), input(1, kIn, 3.0f)};
  std::vector<Call> calls(4);
  f.forward(1, kUid, xs[0], calls[0]);  // arrives at 0.02, computes until 0.12
  f.at(0.05, [&] {                      // these arrive at 0.07, while it computes
    f.forward(2, kUid, xs[1], calls[1]);
    f.forward(3, kUid, xs[2], calls[2]);
    f.forward(1, kUid, xs[3], calls[3]);
  });
  f.world.run();
  const RuntimeStats& s = f.runtime.stats();
  EXPECT_EQ(s.forward_requests, 4u);
  EXPECT_EQ(s.batches, 2u);
  EXPECT_EQ(s.rows, 7u);
  EXPECT_EQ(s.replies, 4u);
  EXPECT_EQ(f.backend.forward_batches(), 2u);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(calls[i].answered()) << i;
    EXPECT_EQ(*calls[i].result->output, times(xs[i], initial(kUid), kOut)) << i;  // its own rows
  }
  // The second batch (6 rows) started when the first ended.
  EXPECT_NEAR(calls[1].at, 0.12 + 0.6 + 0.02, 1e-9);
  EXPECT_EQ(calls[1].at, calls[2].at);
  EXPECT_EQ(calls[1].at, calls[3].at);
}

TEST(ExpertRuntime, ABatchHoldsOneKindForOneExpertWithinTheRowLimit) {
  RuntimeConfig config;
  config.max_batch_rows = 4;
  Fixture f(3, config, 10);
  f.runtime.host(kOther);
  const Tensor x1 = input(1, kIn, 0.0f), x3 = input(3, kIn, 1.0f), g3 = input(3, kOut, 0.5f), x2 = input(2, kIn, 2.0f);
  std::vector<Call> calls(6);
  f.forward(1, kUid, x1, calls[0]);  // busy until 0.12
  f.at(0.05, [&] {
    f.forward(1, kUid, x3, calls[1]);         // batch 2: this ...
    f.forward(2, kOther, x1, calls[2]);       // batch 3
    f.backward(3, kUid, x3, g3, calls[3]);    // batch 4
    f.forward(2, kUid, x1, calls[4]);         // ... and this (4 rows)
    f.forward(3, kUid, x2, calls[5]);         // batch 5: over the row limit
  });
  f.world.run();
  EXPECT_EQ(f.runtime.stats().batches, 5u);
  EXPECT_EQ(f.backend.forward_batches(), 4u);
  EXPECT_EQ(f.backend.backward_batches(), 1u);
  for (const Call& c : calls) ASSERT_TRUE(c.answered());
  EXPECT_EQ(*calls[1].result->output, times(x3, initial(kUid), kOut));
  EXPECT_EQ(*calls[4].result->output, times(x1, initial(kUid), kOut));
  EXPECT_EQ(calls[1].at, calls[4].at);
  EXPECT_EQ(*calls[2].result->output, times(x1, initial(kOther), kOut));
  EXPECT_EQ(*calls[3].result->output, times_transposed(g3, initial(kUid), kIn));
  // The last forward came after the backward: it sees the updated weights.
  EXPECT_LT(calls[3].at, calls[5].at);
  EXPECT_EQ(*calls[5].result->output, times(x2, f.backend.weights(kUid), kOut));
  EXPECT_NE(*calls[5].result->output, times(x2, initial(kUid), kOut));
}

TEST(ExpertRuntime, RefusesWhatItCannotServeWithAnError) {
  Fixture f;
  Tensor nan = input(2, kIn, 0.0f);
  nan.values[3] = std::numeric_limits<float>::quiet_NaN();
  Tensor inf_grad = input(2, kOut, 0.0f);
  inf_grad.values[0] = -std::numeric_limits<float>::infinity();
  std::vector<Call> c(10);
  f.forward(1, ExpertUid{0, 0}, input(1, kIn, 0), c[0]);                    // not hosted
  f.forward(1, ExpertUid{9, 9}, input(1, kIn, 0), c[1]);                    // not even in the grid
  f.forward(1, kUid, input(1, kIn + 1, 0), c[2]);                           // wrong width
  f.backward(1, kUid, input(2, kIn, 0), input(3, kOut, 0), c[3]);          // rows disagree
  f.backward(1, kUid, input(2, kIn, 0), input(2, kOut + 1, 0), c[4]);      // wrong gradient width
  f.forward(2, kUid, nan, c[5]);                                            // NaN
  f.backward(2, kUid, input(2, kIn, 0), inf_grad, c[6]);                   // infinity in the gradient
  f.forward(2, kUid, Tensor::sized(2, kIn), c[7]);                          // sizes to a backend with values
  f.forward(3, kUid, Tensor::zeros(0, kIn), c[8]);                          // no rows
  f.forward(3, kUid, input(4097, kIn, 0), c[9]);                            // over max_batch_rows
  f.world.run();
  EXPECT_TRUE(c[0].refused(ExpertError::UnknownExpert));
  EXPECT_TRUE(c[1].refused(ExpertError::UnknownExpert));
  EXPECT_TRUE(c[2].refused(ExpertError::BadShape));
  EXPECT_TRUE(c[3].refused(ExpertError::BadShape));
  EXPECT_TRUE(c[4].refused(ExpertError::BadShape));
  EXPECT_TRUE(c[5].refused(ExpertError::NonFinite));
  EXPECT_TRUE(c[6].refused(ExpertError::NonFinite));
  EXPECT_TRUE(c[7].refused(ExpertError::BadShape));
  EXPECT_TRUE(c[8].refused(ExpertError::BadShape));
  EXPECT_TRUE(c[9].refused(ExpertError::BadShape));
  for (const Call& call : c) EXPECT_EQ(call.calls, 1);
  EXPECT_EQ(f.runtime.stats().refused, 10u);
  EXPECT_EQ(f.runtime.stats().forward_requests + f.runtime.stats().backward_requests, 0u);
  EXPECT_EQ(f.backend.forward_batches() + f.backend.backward_batches(), 0u);
  EXPECT_EQ(f.client(1).stats().refused, 5u);
  // Refusals come at once, not after computing.
  for (const Call& call : c) EXPECT_NEAR(call.at, 0.04, 1e-9);
}

TEST(ExpertRuntime, RefusesAsOverloadedBeyondItsQueue) {
  RuntimeConfig config;
  config.max_queued_requests = 2;
  Fixture f(3, config, 10);
  std::vector<Call> c(4);
  f.forward(1, kUid, input(1, kIn, 0), c[0]);  // computing: not queued
  f.at(0.05, [&] {
    f.forward(1, kUid, input(1, kIn, 1), c[1]);
    f.forward(2, kUid, input(1, kIn, 2), c[2]);
    f.forward(3, kUid, input(1, kIn, 3), c[3]);  // the third behind a busy backend
  });
  f.world.run_until(0.1);
  EXPECT_EQ(f.runtime.queued(), 2u);
  f.world.run();
  EXPECT_TRUE(c[0].answered());
  EXPECT_TRUE(c[1].answered());
  EXPECT_TRUE(c[2].answered());
  EXPECT_TRUE(c[3].refused(ExpertError::Overloaded));
  EXPECT_NEAR(c[3].at, 0.09, 1e-9);
  EXPECT_EQ(f.runtime.stats().refused, 1u);
  EXPECT_EQ(f.runtime.stats().batches, 2u);
  // With the queue empty again it accepts.
  Call later;
  f.forward(3, kUid, input(1, kIn, 3), later);
  f.world.run();
  EXPECT_TRUE(later.answered());
}

TEST(ExpertRuntime, CountsAndDropsMalformedBytesWithoutThrowing) {
  Fixture f;
  Environment& trainer = f.world.env(1);
  std::vector<Message> bad{
      Message{{7}, 0},                                         // the service byte alone
      Message{{7, 1, 0, 0}, 0},                                // truncated request id
      Message{{7, 9, 0, 0, 0, 0, 0, 0, 0, 0}, 0},              // unknown kind
      Message{{2, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0},              // another service
      Message{{0xFF, 0xFF, 0xFF}, 0},
  };
  ExpertMessage good;
  good.kind = ExpertKind::Forward;
  good.uid = kUid;
  good.tensor = Tensor::sized(1, kIn);
  Message mismatch = encode_expert(good);
  mismatch.virtual_bytes += 1;  // virtual bytes that disagree
  bad.push_back(mismatch);
  Message trailing = encode_expert(good);
  trailing.bytes.push_back(0);
  bad.push_back(trailing);
  for (const Message& m : bad) EXPECT_NO_THROW(f.runtime.handle(1, m));
  for (const Message& m : bad) trainer.send(0, m);
  // Replies sent to a runtime are well-formed but unexpected.
  ExpertMessage reply;
  reply.kind = ExpertKind::Output;
  reply.tensor = input(1, kOut, 0);
  trainer.send(0, encode_expert(reply));
  reply.kind = ExpertKind::Error;
  trainer.send(0, encode_expert(reply));
  EXPECT_NO_THROW(f.world.run());
  EXPECT_EQ(f.runtime.stats().dropped_malformed, 2 * bad.size());
  EXPECT_EQ(f.runtime.stats().dropped_unexpected, 2u);
  EXPECT_EQ(f.runtime.stats().refused, 0u);  // nothing answered
  // And it still serves.
  Call c;
  f.forward(1, kUid, input(1, kIn, 0.5f), c);
  f.world.run();
  EXPECT_TRUE(c.answered());
}

TEST(ExpertRuntime, AbandonsTheQueuedRequestsOfARequesterWhoseLinkFails) {
  Fixture f(3, {}, 10);
  std::vector<Call> c(4);
  f.forward(1, kUid, input(1, kIn, 0), c[0]);  // computing until 0.12
  f.at(0.05, [&] {
    f.forward(2, kUid, input(1, kIn, 1), c[1]);
    f.forward(2, kUid, input(2, kIn, 2), c[2]);
    f.forward(3, kUid, input(1, kIn, 3), c[3]);
  });
  f.at(0.09, [&] {
    EXPECT_EQ(f.runtime.queued(), 3u);
    f.world.set_down(2);
  });
  f.world.run();
  EXPECT_EQ(f.runtime.stats().abandoned, 2u);
  EXPECT_TRUE(c[0].answered());
  EXPECT_TRUE(c[3].answered());
  EXPECT_EQ(c[1].calls + c[2].calls, 0);  // peer 2 is gone with its client's callbacks
  EXPECT_EQ(f.runtime.stats().batches, 2u);
  EXPECT_EQ(f.runtime.stats().rows, 2u);
  EXPECT_EQ(f.runtime.stats().replies, 2u);
}

TEST(ExpertRuntime, DropRefusesTheQueuedRequestsAndFinishesTheBatchInFlight) {
  Fixture f(3, {}, 10);
  f.runtime.host(kOther);
  const Tensor x = input(2, kIn, 0.25f);
  std::vector<Call> c(4);
  f.forward(1, kUid, x, c[0]);  // computing until 0.22
  f.at(0.05, [&] {
    f.forward(2, kUid, x, c[1]);
    f.backward(3, kUid, x, input(2, kOut, 0), c[2]);
    f.forward(3, kOther, x, c[3]);
  });
  f.at(0.1, [&] { f.runtime.drop(kUid); });
  f.world.run();
  EXPECT_FALSE(f.runtime.hosts(kUid));
  EXPECT_FALSE(f.backend.holds(kUid));
  ASSERT_TRUE(c[0].answered());
  EXPECT_EQ(*c[0].result->output, times(x, initial(kUid), kOut));
  EXPECT_TRUE(c[1].refused(ExpertError::UnknownExpert));
  EXPECT_TRUE(c[2].refused(ExpertError::UnknownExpert));
  EXPECT_NEAR(c[1].at, 0.12, 1e-9);  // told when dropped (0.1), not after the batch (0.22)
  ASSERT_TRUE(c[3].answered());
  EXPECT_EQ(*c[3].result->output, times(x, initial(kOther), kOut));
  Call after;
  f.forward(1, kUid, x, after);
  f.world.run();
  EXPECT_TRUE(after.refused(ExpertError::UnknownExpert));
  f.runtime.drop(kUid);  // twice: nothing
  EXPECT_EQ(f.runtime.experts(), (std::set<ExpertUid>{kOther}));
}

TEST(ExpertRuntime, HostRejectsUidsOutsideTheGridAndCheckpointsThatDoNotFit) {
  Fixture f;
  EXPECT_THROW(f.runtime.host({4, 0}), std::invalid_argument);
  EXPECT_THROW(f.runtime.host({1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(f.runtime.host(kOther, std::vector<std::uint8_t>(5)), CheckpointError);
  EXPECT_FALSE(f.runtime.hosts(kOther));
  const std::vector<std::uint8_t> cp = f.runtime.checkpoint(kUid);
  EXPECT_EQ(cp.size(), kIn * kOut * sizeof(float));
  f.runtime.host(kOther, cp);  // kOther now has kUid's weights
  EXPECT_EQ(f.backend.weights(kOther), initial(kUid));
  EXPECT_THROW(ExpertRuntime(f.world.env(0), ExpertGrid{"bad.name", 2, 4}, f.backend), std::invalid_argument);
  RuntimeConfig zero;
  zero.max_batch_rows = 0;
  EXPECT_THROW(ExpertRuntime(f.world.env(0), ExpertGrid{"ffn", 2, 4}, f.backend, zero), std::invalid_argument);
}

TEST(ExpertClient, TimesOutWhenTheRuntimeVanishesSilently) {
  Fixture f;
  f.world.set_down(0, MemoryWorld::Departure::Silent);
  Call fw, bw;
  f.forward(1, kUid, input(1, kIn, 0), fw);
  f.backward(1, kUid, input(1, kIn, 0), input(1, kOut, 0), bw);
  f.world.run();
  ASSERT_TRUE(fw.result.has_value());
  EXPECT_EQ(fw.result->failure, CallFailure::TimedOut);
  EXPECT_FALSE(fw.result->output.has_value());
  EXPECT_NEAR(fw.at, 2.0, 1e-9);
  ASSERT_TRUE(bw.result.has_value());
  EXPECT_EQ(bw.result->failure, CallFailure::TimedOut);
  EXPECT_NEAR(bw.at, 4.0, 1e-9);
  EXPECT_EQ(fw.calls + bw.calls, 2);
  EXPECT_EQ(f.client(1).stats().timed_out, 2u);
  EXPECT_EQ(f.client(1).pending(), 0u);
  EXPECT_STREQ(call_failure_name(CallFailure::TimedOut), "timed out");
}

TEST(ExpertClient, FailsItsCallsWhenTheRuntimeCrashes) {
  Fixture f(3, {}, 10);
  Call during, before_crash_other, after;
  f.forward(1, kUid, input(2, kIn, 0), during);  // computing when the runtime crashes
  f.forward(2, kUid, input(1, kIn, 0), before_crash_other);
  f.at(0.05, [&] { f.world.set_down(0); });
  f.world.run();
  ASSERT_TRUE(during.result.has_value());
  EXPECT_EQ(during.result->failure, CallFailure::LinkFailed);
  EXPECT_NEAR(during.at, 0.05, 1e-9);  // at once, not at the timeout
  ASSERT_TRUE(before_crash_other.result.has_value());
  EXPECT_EQ(before_crash_other.result->failure, CallFailure::LinkFailed);
  // A call to the crashed runtime is refused one path latency later.
  f.forward(3, kUid, input(1, kIn, 0), after);
  const Seconds sent = f.world.now();
  f.world.run();
  ASSERT_TRUE(after.result.has_value());
  EXPECT_EQ(after.result->failure, CallFailure::LinkFailed);
  EXPECT_NEAR(after.at - sent, 0.02, 1e-9);
  EXPECT_EQ(f.client(1).stats().link_failed, 1u);
  EXPECT_EQ(during.calls, 1);
}

TEST(ExpertClient, DropsRepliesThatMatchNothingPendingAndRejectsBadOnes) {
  Fixture f;
  f.world.set_down(0, MemoryWorld::Departure::Silent);  // no genuine replies
  ExpertClient& client = f.client(1);
  Call c;
  f.forward(1, kUid, input(2, kIn, 0), c);  // request id 1, to peer 0
  ASSERT_EQ(client.pending(), 1u);
  ExpertMessage reply;
  reply.kind = ExpertKind::Output;
  reply.request_id = 1;
  reply.tensor = input(2, kOut, 0);
  client.handle(2, encode_expert(reply));  // from the wrong peer
  reply.request_id = 99;
  client.handle(0, encode_expert(reply));  // an unknown request
  ExpertMessage request;
  request.kind = ExpertKind::Forward;
  request.request_id = 1;
  request.uid = kUid;
  request.tensor = input(2, kIn, 0);
  client.handle(0, encode_expert(request));  // a request, not a reply
  EXPECT_NO_THROW(client.handle(0, Message{{7, 3}, 0}));
  EXPECT_NO_THROW(client.handle(0, Message{}));
  EXPECT_EQ(client.stats().dropped_unexpected, 3u);
  EXPECT_EQ(client.stats().dropped_malformed, 2u);
  EXPECT_EQ(c.calls, 0);
  EXPECT_EQ(client.pending(), 1u);

  // From the right peer with the right id, but the wrong shape: a bad reply, once.
  reply.request_id = 1;
  reply.tensor = input(2, kOut + 1, 0);
  client.handle(0, encode_expert(reply));
  ASSERT_TRUE(c.result.has_value());
  EXPECT_EQ(c.result->failure, CallFailure::BadReply);
  EXPECT_EQ(client.stats().bad_replies, 1u);
  reply.tensor = input(2, kOut, 0);
  client.handle(0, encode_expert(reply));  // the good reply, too late
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(client.stats().dropped_unexpected, 4u);

  // Non-finite values and a virtual answer to a carried request are bad replies too.
  Call nan, sized;
  f.forward(1, kUid, input(2, kIn, 0), nan);    // id 2
  f.forward(1, kUid, input(2, kIn, 0), sized);  // id 3
  reply.request_id = 2;
  reply.tensor.values[4] = std::numeric_limits<float>::quiet_NaN();
  client.handle(0, encode_expert(reply));
  reply.request_id = 3;
  reply.tensor = Tensor::sized(2, kOut);
  client.handle(0, encode_expert(reply));
  EXPECT_EQ(nan.result->failure, CallFailure::BadReply);
  EXPECT_EQ(sized.result->failure, CallFailure::BadReply);
  EXPECT_EQ(client.pending(), 0u);
  f.world.run();
  EXPECT_EQ(client.stats().timed_out, 0u);
  EXPECT_EQ(c.calls + nan.calls + sized.calls, 3);
}

TEST(ExpertClient, CancelsItsTimersWhenDestroyedAndRejectsNonPositiveTimeouts) {
  Fixture f;
  f.world.set_down(0, MemoryWorld::Departure::Silent);
  Call c;
  f.forward(1, kUid, input(1, kIn, 0), c);
  EXPECT_EQ(f.world.outstanding_timers(1), 1u);
  f.world.env(1).set_sink(nullptr);
  f.clients[0].reset();
  EXPECT_EQ(f.world.outstanding_timers(1), 0u);
  f.world.run();
  EXPECT_EQ(c.calls, 0);
  EXPECT_THROW(ExpertClient(f.world.env(1), ClientConfig{0, 1}), std::invalid_argument);
  EXPECT_THROW(ExpertClient(f.world.env(1), ClientConfig{1, -1}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe

namespace swarmlab::core::dmoe {
namespace {

// A runtime id read from the DHT may name this peer or nobody: the call fails like a broken link,
// later and never inside the call, and the other calls go on.
TEST(ExpertClient, ACallToItselfOrToNoPeerFailsLaterAsALinkFailure) {
  Fixture f;
  Call self, nobody, fine;
  f.client(1).forward(1, kUid, input(1, kIn, 0), kOut, f.into(self));
  f.client(1).forward(999, kUid, input(1, kIn, 0), kOut, f.into(nobody));
  f.forward(1, kUid, input(1, kIn, 0), fine);
  EXPECT_FALSE(self.result.has_value());
  EXPECT_FALSE(nobody.result.has_value());
  f.world.run();
  ASSERT_TRUE(self.result.has_value());
  EXPECT_EQ(self.result->failure, CallFailure::LinkFailed);
  EXPECT_NEAR(self.at, 0.0, 1e-12);
  ASSERT_TRUE(nobody.result.has_value());
  EXPECT_EQ(nobody.result->failure, CallFailure::LinkFailed);
  EXPECT_TRUE(fine.answered());
  EXPECT_EQ(self.calls + nobody.calls + fine.calls, 3);
  EXPECT_EQ(f.client(1).stats().link_failed, 2u);
  EXPECT_EQ(f.client(1).pending(), 0u);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
