#include "exec/live_environment.h"

#include <iomanip>
#include <stdexcept>

namespace swarmlab::exec {
namespace {

void json_string(std::ostream& out, std::string_view s) {
  out << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out << '\\' << c;
    else if (static_cast<unsigned char>(c) < 0x20) out << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int(c) << std::dec;
    else out << c;
  }
  out << '"';
}

}  // namespace

LiveEnvironment::LiveEnvironment(EventLoop& loop, TcpTransport::Options transport, LiveEnvironmentOptions options)
    : loop_(loop),
      self_(transport.self),
      options_(std::move(options)),
      transport_(
          loop, std::move(transport),
          [this](core::PeerId from, core::Message m) {
            if (sink_) sink_->handle(from, m);
          },
          [this](core::PeerId peer) {
            if (sink_) sink_->on_link_failure(peer);
          }),
      worker_(loop, options_.compute_sps),
      rng_(options_.seed ^ options_.process_nonce, self_ + 1) {
  if (!options_.trace_path.empty()) {
    trace_ = std::make_unique<std::ofstream>(options_.trace_path, std::ios::app);
    if (!*trace_) throw std::runtime_error("cannot write the trace file " + options_.trace_path);
  }
}

LiveEnvironment::~LiveEnvironment() = default;

core::TimerHandle LiveEnvironment::schedule(core::Seconds delay, std::function<void()> fn) {
  return loop_.schedule(delay, std::move(fn));
}

core::TimerHandle LiveEnvironment::schedule_at(core::Seconds due, std::function<void()> fn) {
  return loop_.schedule_at(due, std::move(fn));
}

void LiveEnvironment::cancel(core::TimerHandle handle) {
  if (handle == 0) return;
  if (handle & kComputeBit) worker_.cancel(handle & ~kComputeBit);
  else loop_.cancel(handle);
}

void LiveEnvironment::send(core::PeerId to, core::Message message) {
  if (message.virtual_bytes > 0)
    throw std::invalid_argument("live mode carries real bytes only: a message with " +
                                std::to_string(message.virtual_bytes) +
                                " virtual payload bytes was sent (run averaging with real values)");
  transport_.send(to, std::move(message));
}

void LiveEnvironment::set_pacing(core::PeerId to, double bits_per_s) {
  if (to >= transport_.peers() || to == self_)
    throw std::out_of_range("set_pacing: peer " + std::to_string(self_) + " cannot pace peer " + std::to_string(to));
  ++pacing_calls_;
  if (!options_.pacing) return;
  transport_.set_pacing(to, bits_per_s / 8.0);
}

core::TimerHandle LiveEnvironment::compute(std::uint64_t samples, std::function<void()> done) {
  const core::Seconds start = now();
  return kComputeBit | worker_.submit(samples, [this, start, samples, done = std::move(done)] {
           trace("compute", std::to_string(samples) + " samples", start, now());
           done();
         });
}

void LiveEnvironment::trace(std::string_view category, std::string_view name, core::Seconds start, core::Seconds end) {
  if (!trace_) return;
  *trace_ << "{\"peer\":" << self_ << ",\"cat\":";
  json_string(*trace_, category);
  *trace_ << ",\"name\":";
  json_string(*trace_, name);
  *trace_ << std::setprecision(9) << ",\"start\":" << start << ",\"end\":" << end << "}\n";
}

}  // namespace swarmlab::exec
