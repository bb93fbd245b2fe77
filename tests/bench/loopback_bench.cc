// The loopback limit and the live transport against it: one bulk TCP stream over 127.0.0.1 with
// plain blocking sockets, and the same bytes as 512 KiB messages through exec::TcpTransport (two
// peers, each on its own event loop and thread). Bytes/s are the payload moved.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <benchmark/benchmark.h>

#include "exec/bulk_stream.h"
#include "exec/tcp_transport.h"

namespace {

using namespace swarmlab;

constexpr std::uint64_t kBytes = 256ull << 20;
constexpr std::size_t kMessage = 512 << 10;

void BM_LoopbackBulkStream(benchmark::State& state) {
  for (auto _ : state) {
    const auto r = exec::measure_loopback_stream(kBytes);
    state.SetIterationTime(r.seconds);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_LoopbackBulkStream)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_TransportStream(benchmark::State& state) {
  for (auto _ : state) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in sa = exec::SocketAddress::loopback(0).to_sockaddr();
    bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
    listen(fd, 8);
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    const std::vector<std::optional<exec::SocketAddress>> addresses = {exec::SocketAddress::loopback(ntohs(bound.sin_port)),
                                                                       std::nullopt};
    std::atomic<std::uint64_t> received{0};
    std::atomic<double> finished{0};
    std::thread receiver([&] {
      exec::EventLoop loop;
      exec::TcpTransport::Options o;
      o.self = 0;
      o.addresses = addresses;
      o.listen_fd = fd;
      exec::TcpTransport t(loop, o, [&](core::PeerId, core::Message m) { received += m.bytes.size(); }, nullptr);
      t.start();
      loop.run_until([&] { return received.load() >= kBytes; }, 120);
      finished = exec::EventLoop::monotonic_seconds();
    });
    exec::EventLoop loop;
    exec::TcpTransport::Options o;
    o.self = 1;
    o.addresses = addresses;
    exec::TcpTransport t(loop, o, [](core::PeerId, core::Message) {}, nullptr);
    t.start();
    const double start = exec::EventLoop::monotonic_seconds();
    for (std::uint64_t sent = 0; sent < kBytes; sent += kMessage) {
      core::Message m;
      m.bytes.assign(kMessage, 1);
      t.send(0, std::move(m));
      // Bound the queue as the averaging protocol's part stream does not: keep ~16 MiB in flight.
      loop.run_until([&] { return t.queued_bytes() < (16u << 20); }, 60);
    }
    loop.run_until([&] { return t.queued_bytes() == 0; }, 60);
    receiver.join();
    state.SetIterationTime(finished.load() - start);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_TransportStream)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
