// LiveEnvironment: the core's seam over real sockets and threads, and a butterfly round on it.
#include "exec/live_environment.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include <gtest/gtest.h>

#include "core/averaging/averaging_service.h"
#include "core/averaging/role_assignment.h"
#include "core/service_mux.h"
#include "exec/gradient_values.h"
#include "loopback_listener.h"

namespace swarmlab::exec {
namespace {

using testing::listening_socket;

struct Peers {
  Peers(std::size_t n, double compute_sps = 0) {
    std::vector<int> fds(n);
    std::vector<std::optional<SocketAddress>> addresses(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t port = 0;
      fds[i] = listening_socket(port);
      addresses[i] = SocketAddress::loopback(port);
    }
    for (std::size_t i = 0; i < n; ++i) {
      TcpTransport::Options t;
      t.self = static_cast<core::PeerId>(i);
      t.addresses = addresses;
      t.listen_fd = fds[i];
      t.network = 5;
      LiveEnvironmentOptions e;
      e.seed = 9;
      e.compute_sps = compute_sps;
      envs.push_back(std::make_unique<LiveEnvironment>(loop, t, e));
    }
  }
  EventLoop loop;
  std::vector<std::unique_ptr<LiveEnvironment>> envs;
};

TEST(LiveEnvironment, ComputeCompletesOnTheLoopAfterItsDuration) {
  Peers p(1, /*compute_sps=*/1000);
  auto& env = *p.envs[0];
  const double start = env.now();
  double done_at = -1;
  bool cancelled_ran = false;
  env.compute(50, [&] { done_at = env.now(); });  // 0.05 s
  const auto h = env.compute(50, [&] { cancelled_ran = true; });
  env.cancel(h);
  ASSERT_TRUE(p.loop.run_until([&] { return done_at >= 0; }, 3));
  EXPECT_GE(done_at - start, 0.045);
  p.loop.run_until([] { return false; }, 0.1);
  EXPECT_FALSE(cancelled_ran);
}

TEST(LiveEnvironment, PeersWithoutComputeCannotCompute) {
  Peers p(1);
  EXPECT_THROW(p.envs[0]->compute(1, [] {}), std::logic_error);
}

TEST(LiveEnvironment, RefusesVirtualPayloads) {
  Peers p(2);
  core::Message m;
  m.bytes = {2};
  m.virtual_bytes = 1000;
  EXPECT_THROW(p.envs[0]->send(1, m), std::invalid_argument);
}

TEST(LiveEnvironment, RngIsSeededBySeedAndPeer) {
  Peers p(2);
  core::Rng expected(9, 1 + 1);
  EXPECT_EQ(p.envs[1]->rng().next_u64(), expected.next_u64());
}

TEST(LiveEnvironment, TimersAreCancellable) {
  Peers p(1);
  bool ran = false, later = false;
  const auto h = p.envs[0]->schedule(0.01, [&] { ran = true; });
  p.envs[0]->schedule(0.03, [&] { later = true; });
  p.envs[0]->cancel(h);
  ASSERT_TRUE(p.loop.run_until([&] { return later; }, 2));
  EXPECT_FALSE(ran);
}

// The core's butterfly round over real TCP, three peers in one process.
TEST(LiveEnvironment, ButterflyRoundOverTcpAveragesExactly) {
  const std::size_t n = 3;
  Peers p(n);
  std::vector<std::unique_ptr<core::averaging::AveragingService>> services;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes;
  for (std::size_t i = 0; i < n; ++i) {
    services.push_back(std::make_unique<core::averaging::AveragingService>(*p.envs[i]));
    muxes.push_back(std::make_unique<core::ServiceMux>());
    auto* svc = services.back().get();
    muxes.back()->add(core::ServiceId::Averaging, *svc);
    p.envs[i]->set_sink(muxes.back().get());
    p.envs[i]->start();
  }
  core::planner::PlannerInput in;
  for (std::size_t i = 0; i < n; ++i) in.peers.push_back({1, 1e9, 1e9, false});
  const auto roles = core::averaging::assign_roles(core::averaging::Strategy::AllReduce, in);
  const std::uint64_t length = 300000;
  const auto plan = core::averaging::make_round_plan(4, roles, length, core::codec::Codec::Fp16, 64 * 1024);
  std::vector<std::vector<float>> values(n, std::vector<float>(length));
  std::size_t done = 0;
  for (std::size_t i = 0; i < n; ++i) {
    fill_gradient(gradient_key(9, 4, static_cast<core::PeerId>(i)), values[i]);
    services[i]->start_round(plan, values[i], {}, [&](const core::averaging::RoundOutcome& o) {
      EXPECT_TRUE(o.completed);
      EXPECT_EQ(o.fraction_averaged, 1.0);
      ++done;
    });
  }
  ASSERT_TRUE(p.loop.run_until([&] { return done == n; }, 20));
  for (std::size_t i = 0; i < n; ++i) {
    const AverageCheck c = check_average(plan, 9, values[i], 1);
    EXPECT_EQ(c.checked, length);
    EXPECT_LE(c.max_abs_error, codec_tolerance(core::codec::Codec::Fp16));
  }
}

}  // namespace
}  // namespace swarmlab::exec
