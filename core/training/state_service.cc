#include "core/training/state_service.h"

#include <algorithm>
#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::training {

StateService::StateService(Environment& env, StateConfig config, StepSource step)
    : env_(env), config_(config), step_(std::move(step)) {
  if (config_.chunk_bytes == 0 || config_.chunk_bytes > 0xFFFFFFFFull)
    throw std::invalid_argument("state chunk size must be in [1, 2^32)");
}

StateService::~StateService() {
  if (watchdog_) env_.cancel(watchdog_);
}

void StateService::download(PeerId provider, Done done) {
  if (watchdog_) env_.cancel(watchdog_);
  watchdog_ = 0;
  done_ = std::move(done);
  provider_ = provider;
  ++request_id_;
  have_header_ = false;
  chunks_expected_ = chunks_received_ = 0;
  last_heard_ = env_.now();
  env_.send(provider, encode_state({StateKind::Request, request_id_}));
  arm_watchdog();
}

void StateService::handle(PeerId from, const Message& message) {
  StateMessage m;
  try {
    m = decode_state(message);
  } catch (const DecodeError&) {
    ++malformed_;
    return;
  }
  if (m.kind == StateKind::Request) return serve(from, m.request_id);
  if (!done_ || from != provider_ || m.request_id != request_id_) return;  // stale or stray
  last_heard_ = env_.now();
  if (m.kind == StateKind::Header) on_header(m);
  else on_chunk(m);
}

void StateService::serve(PeerId to, std::uint64_t request_id) {
  ++served_;
  const std::uint64_t total = config_.state_bytes;
  const auto chunks = static_cast<std::uint32_t>((total + config_.chunk_bytes - 1) / config_.chunk_bytes);
  StateMessage header{StateKind::Header, request_id};
  header.step = step_();
  header.total_bytes = total;
  header.chunks = chunks;
  env_.send(to, encode_state(header));
  // Queued all at once: the connection delivers them in order at whatever rate the path allows.
  for (std::uint32_t i = 0; i < chunks; ++i) {
    StateMessage c{StateKind::Chunk, request_id};
    c.index = i;
    c.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(config_.chunk_bytes, total - std::uint64_t{i} * config_.chunk_bytes));
    env_.send(to, encode_state(c));
  }
}

void StateService::on_header(const StateMessage& m) {
  have_header_ = true;
  step_at_provider_ = m.step;
  chunks_expected_ = m.chunks;
  if (chunks_expected_ == 0) finish(true);
}

void StateService::on_chunk(const StateMessage& m) {
  if (!have_header_ || m.index != chunks_received_) return finish(false);  // out of order: broken stream
  if (++chunks_received_ == chunks_expected_) finish(true);
}

void StateService::on_link_failure(PeerId peer) {
  if (done_ && peer == provider_) finish(false);
}

void StateService::arm_watchdog() {
  const Seconds due = last_heard_ + config_.idle_timeout;
  watchdog_ = env_.schedule(std::max(0.0, due - env_.now()), [this] {
    watchdog_ = 0;
    if (!done_) return;
    if (env_.now() - last_heard_ >= config_.idle_timeout) finish(false);
    else arm_watchdog();
  });
}

void StateService::finish(bool ok) {
  if (watchdog_) env_.cancel(watchdog_);
  watchdog_ = 0;
  Done done = std::move(done_);
  done_ = nullptr;
  const std::uint64_t step = step_at_provider_;
  // Never inside download() or a handler's caller's stack frame that may still use us.
  env_.schedule(0, [done = std::move(done), ok, step] { done(ok, step); });
}

}  // namespace swarmlab::core::training
