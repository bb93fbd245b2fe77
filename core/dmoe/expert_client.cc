#include "core/dmoe/expert_client.h"

#include <cmath>
#include <stdexcept>


namespace swarmlab::core::dmoe {

const char* call_failure_name(CallFailure f) {
  switch (f) {
    case CallFailure::None: return "none";
    case CallFailure::Refused: return "refused";
    case CallFailure::TimedOut: return "timed out";
    case CallFailure::LinkFailed: return "link failed";
    case CallFailure::BadReply: return "bad reply";
  }
  return "unknown";
}

ExpertClient::ExpertClient(Environment& env, ClientConfig config) : env_(env), config_(config) {
  if (!(config_.forward_timeout_s > 0) || !(config_.backward_timeout_s > 0))
    throw std::invalid_argument("expert client: timeouts must be positive");
}

ExpertClient::~ExpertClient() {
  for (auto& [id, p] : pending_) env_.cancel(p.timer);
}

void ExpertClient::forward(PeerId runtime, const ExpertUid& uid, const Tensor& input, std::uint32_t expected_cols, Done done) {
  ExpertMessage m;
  m.kind = ExpertKind::Forward;
  m.uid = uid;
  m.tensor = input;
  send(runtime, std::move(m), expected_cols, config_.forward_timeout_s, std::move(done));
}

void ExpertClient::backward(PeerId runtime, const ExpertUid& uid, const Tensor& input, const Tensor& grad_output,
                            std::uint32_t expected_cols, Done done) {
  ExpertMessage m;
  m.kind = ExpertKind::Backward;
  m.uid = uid;
  m.tensor = input;
  m.grad_output = grad_output;
  send(runtime, std::move(m), expected_cols, config_.backward_timeout_s, std::move(done));
}

void ExpertClient::send(PeerId runtime, ExpertMessage m, std::uint32_t expected_cols, Seconds timeout, Done done) {
  const std::uint64_t id = next_request_id_++;
  m.request_id = id;
  Pending p;
  p.runtime = runtime;
  p.rows = m.tensor.rows;
  p.cols = expected_cols;
  p.is_virtual = m.tensor.is_virtual;
  p.done = std::move(done);
  p.timer = env_.schedule(timeout, [this, id] {
    ++stats_.timed_out;
    Result r;
    r.failure = CallFailure::TimedOut;
    finish(id, std::move(r));
  });
  pending_.emplace(id, std::move(p));
  ++stats_.requests;
  // A runtime id comes from the DHT, where anyone may have written it: one that names no other
  // peer of the collaboration (or this one) fails like a broken link, later, never in this call.
  bool sendable = runtime != env_.self();
  if (sendable) {
    try {
      env_.send(runtime, encode_expert(m));
    } catch (const std::out_of_range&) {
      sendable = false;
    }
  }
  if (!sendable) {
    Pending& pending = pending_.at(id);
    env_.cancel(pending.timer);
    pending.timer = env_.schedule(0, [this, id] {
      ++stats_.link_failed;
      Result r;
      r.failure = CallFailure::LinkFailed;
      finish(id, std::move(r));
    });
  }
}

void ExpertClient::finish(std::uint64_t request_id, Result result) {
  const auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  env_.cancel(p.timer);
  p.done(std::move(result));
}

void ExpertClient::handle(PeerId from, const Message& message) {
  std::optional<ExpertMessage> decoded = try_decode_expert(message);
  if (!decoded) {
    ++stats_.dropped_malformed;
    return;
  }
  ExpertMessage& m = *decoded;
  const auto it = pending_.find(m.request_id);
  if ((m.kind != ExpertKind::Output && m.kind != ExpertKind::Error) || it == pending_.end() || it->second.runtime != from) {
    ++stats_.dropped_unexpected;
    return;
  }
  Result r;
  if (m.kind == ExpertKind::Error) {
    ++stats_.refused;
    r.failure = CallFailure::Refused;
    r.error = m.error;
  } else {
    const Pending& p = it->second;
    bool ok = m.tensor.rows == p.rows && m.tensor.cols == p.cols && m.tensor.is_virtual == p.is_virtual;
    for (const float v : m.tensor.values) ok = ok && std::isfinite(v);
    if (ok) {
      ++stats_.answered;
      r.output = std::move(m.tensor);
    } else {
      ++stats_.bad_replies;
      r.failure = CallFailure::BadReply;
    }
  }
  finish(m.request_id, std::move(r));
}

void ExpertClient::on_link_failure(PeerId peer) {
  std::vector<std::uint64_t> failed;
  for (const auto& [id, p] : pending_)
    if (p.runtime == peer) failed.push_back(id);
  for (const std::uint64_t id : failed) {
    ++stats_.link_failed;
    Result r;
    r.failure = CallFailure::LinkFailed;
    finish(id, std::move(r));
  }
}

}  // namespace swarmlab::core::dmoe
