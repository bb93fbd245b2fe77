#include "core/training/state_service.h"

#include <algorithm>
#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::training {

StateService::StateService(Environment& env, StateConfig config, Source source, PeerLimits* limits)
    : env_(env), config_(config), source_(std::move(source)), limits_(limits) {
  if (config_.chunk_bytes == 0 || config_.chunk_bytes > 0xFFFFFFFFull)
    throw std::invalid_argument("state chunk size must be in [1, 2^32)");
}

StateService::~StateService() {
  if (watchdog_) env_.cancel(watchdog_);
}

void StateService::request(PeerId provider, const StateWanted& wanted, Done done) {
  if (watchdog_) env_.cancel(watchdog_);
  watchdog_ = 0;
  done_ = std::move(done);
  provider_ = provider;
  ++request_id_;
  have_header_ = false;
  total_bytes_ = received_bytes_ = 0;
  chunks_expected_ = chunks_received_ = 0;
  received_.clear();
  last_heard_ = env_.now();
  StateMessage request;
  request.kind = wanted.updates ? StateKind::UpdatesRequest : StateKind::Request;
  request.request_id = request_id_;
  request.step = wanted.since_step;
  request.lineage = wanted.since_lineage;
  env_.send(provider, encode_state(request));
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
  if (m.kind == StateKind::Request || m.kind == StateKind::UpdatesRequest) {
    if (limits_ && !limits_->admit_request(from)) return refuse(from, m.request_id);  // over its budget
    if (m.kind == StateKind::Request) return serve(from, m.request_id, StateWanted{});
    return serve(from, m.request_id, StateWanted{true, m.step, m.lineage});
  }
  if (!done_ || from != provider_ || m.request_id != request_id_) return;  // stale or stray
  last_heard_ = env_.now();
  if (m.kind == StateKind::Refused) finish(false);
  else if (m.kind == StateKind::Header) on_header(m);
  else on_chunk(m);
}

void StateService::refuse(PeerId to, std::uint64_t request_id) {
  StateMessage refused;
  refused.kind = StateKind::Refused;
  refused.request_id = request_id;
  env_.send(to, encode_state(refused));
}

void StateService::serve(PeerId to, std::uint64_t request_id, const StateWanted& wanted) {
  std::optional<StateSnapshot> served = source_(wanted);
  if (!served) return refuse(to, request_id);
  ++served_;
  StateSnapshot& snap = *served;
  const bool carried = !snap.bytes.empty();
  const std::uint64_t total = carried ? snap.bytes.size() : snap.virtual_bytes;
  const auto chunks = static_cast<std::uint32_t>((total + config_.chunk_bytes - 1) / config_.chunk_bytes);
  StateMessage header;
  header.kind = StateKind::Header;
  header.request_id = request_id;
  header.step = snap.step;
  header.lineage = snap.lineage;
  header.total_bytes = total;
  header.chunks = chunks;
  env_.send(to, encode_state(header));
  // Queued all at once: the connection delivers them in order at whatever rate the path allows.
  for (std::uint32_t i = 0; i < chunks; ++i) {
    StateMessage c;
    c.kind = StateKind::Chunk;
    c.request_id = request_id;
    c.index = i;
    const std::uint64_t first = std::uint64_t{i} * config_.chunk_bytes;
    c.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(config_.chunk_bytes, total - first));
    c.virtual_payload = !carried;
    if (carried) c.payload.assign(snap.bytes.begin() + static_cast<std::ptrdiff_t>(first),
                                  snap.bytes.begin() + static_cast<std::ptrdiff_t>(first + c.bytes));
    env_.send(to, encode_state(c));
  }
}

void StateService::on_header(const StateMessage& m) {
  if (have_header_ || m.total_bytes > config_.max_state_bytes) return finish(false);
  have_header_ = true;
  step_at_provider_ = m.step;
  lineage_at_provider_ = m.lineage;
  total_bytes_ = m.total_bytes;
  chunks_expected_ = m.chunks;
  if (chunks_expected_ == 0) finish(total_bytes_ == 0);
}

void StateService::on_chunk(StateMessage& m) {
  // Out of order, beyond the announced size, or a mix of carried and charged chunks: a broken stream.
  if (!have_header_ || m.index != chunks_received_ || m.bytes > total_bytes_ - received_bytes_ ||
      (m.virtual_payload && !received_.empty()) || (!m.virtual_payload && received_.size() != received_bytes_))
    return finish(false);
  received_bytes_ += m.bytes;
  if (!m.virtual_payload) received_.insert(received_.end(), m.payload.begin(), m.payload.end());
  if (++chunks_received_ == chunks_expected_) finish(received_bytes_ == total_bytes_);
}

void StateService::on_link_failure(PeerId peer) {
  if (done_ && peer == provider_) finish(false);
}

void StateService::arm_watchdog() {
  const Seconds due = last_heard_ + config_.idle_timeout;
  watchdog_ = env_.schedule_at(due, [this] {
    watchdog_ = 0;
    if (!done_) return;
    if (env_.now() + kTimerSlack - last_heard_ >= config_.idle_timeout) finish(false);
    else arm_watchdog();
  });
}

void StateService::finish(bool ok) {
  if (!done_) return;
  if (watchdog_) env_.cancel(watchdog_);
  watchdog_ = 0;
  Done done = std::move(done_);
  done_ = nullptr;
  StateSnapshot state;
  state.step = step_at_provider_;
  state.lineage = lineage_at_provider_;
  if (ok) state.bytes = std::move(received_);
  received_.clear();
  // Never inside download() or a handler's caller's stack frame that may still use us.
  env_.schedule(0, [done = std::move(done), ok, state = std::move(state)]() mutable { done(ok, std::move(state)); });
}

}  // namespace swarmlab::core::training
