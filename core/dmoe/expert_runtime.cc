#include "core/dmoe/expert_runtime.h"

#include <cmath>
#include <cstring>
#include <stdexcept>


namespace swarmlab::core::dmoe {

Tensor slice_rows(const Tensor& t, std::uint32_t first, std::uint32_t count) {
  if (static_cast<std::uint64_t>(first) + count > t.rows) throw std::out_of_range("slice_rows: beyond the tensor");
  if (t.is_virtual) return Tensor::sized(count, t.cols);
  Tensor out{count, t.cols, false, {}};
  const auto begin = t.values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * t.cols);
  out.values.assign(begin, begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(count) * t.cols));
  return out;
}

Tensor concat_rows(const std::vector<const Tensor*>& parts) {
  if (parts.empty()) throw std::invalid_argument("concat_rows: nothing to concatenate");
  Tensor out{0, parts[0]->cols, parts[0]->is_virtual, {}};
  for (const Tensor* p : parts) {
    if (p->cols != out.cols || p->is_virtual != out.is_virtual) throw std::invalid_argument("concat_rows: parts differ");
    out.rows += p->rows;
    if (!out.is_virtual) out.values.insert(out.values.end(), p->values.begin(), p->values.end());
  }
  return out;
}

ExpertRuntime::ExpertRuntime(Environment& env, ExpertGrid grid, ExpertBackend& backend, RuntimeConfig config)
    : env_(env), grid_(std::move(grid)), backend_(backend), config_(config) {
  grid_.check();
  if (config_.max_batch_rows == 0) throw std::invalid_argument("expert runtime: max_batch_rows must be positive");
}

void ExpertRuntime::host(const ExpertUid& uid) {
  if (!grid_.contains(uid)) throw std::invalid_argument("expert runtime: uid " + uid_text(uid) + " is outside the grid");
  backend_.create(uid);
  experts_.insert(uid);
}

void ExpertRuntime::host(const ExpertUid& uid, std::span<const std::uint8_t> checkpoint) {
  if (!grid_.contains(uid)) throw std::invalid_argument("expert runtime: uid " + uid_text(uid) + " is outside the grid");
  backend_.load(uid, checkpoint);
  experts_.insert(uid);
}

void ExpertRuntime::drop(const ExpertUid& uid) {
  if (experts_.erase(uid) == 0) return;
  backend_.remove(uid);
  // A batch in flight for it finishes; what waits behind it is refused now.
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->message.uid == uid) {
      refuse(it->from, it->message.request_id, ExpertError::UnknownExpert);
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

void ExpertRuntime::refuse(PeerId to, std::uint64_t request_id, ExpertError error) {
  ExpertMessage reply;
  reply.kind = ExpertKind::Error;
  reply.request_id = request_id;
  reply.error = error;
  ++stats_.refused;
  env_.send(to, encode_expert(reply));
}

std::optional<ExpertError> ExpertRuntime::check(const ExpertMessage& m) const {
  if (!experts_.contains(m.uid)) return ExpertError::UnknownExpert;
  const auto shaped = [&](const Tensor& t, std::uint32_t width) {
    return t.rows > 0 && t.rows <= config_.max_batch_rows && t.cols == width && t.is_virtual != backend_.has_values();
  };
  if (!shaped(m.tensor, backend_.input_width())) return ExpertError::BadShape;
  if (m.kind == ExpertKind::Backward &&
      (!shaped(m.grad_output, backend_.output_width()) || m.grad_output.rows != m.tensor.rows))
    return ExpertError::BadShape;
  const auto finite = [](const Tensor& t) {
    for (const float v : t.values)
      if (!std::isfinite(v)) return false;
    return true;
  };
  if (!finite(m.tensor) || (m.kind == ExpertKind::Backward && !finite(m.grad_output))) return ExpertError::NonFinite;
  return std::nullopt;
}

void ExpertRuntime::handle(PeerId from, const Message& message) {
  std::optional<ExpertMessage> decoded = try_decode_expert(message);
  if (!decoded) {
    ++stats_.dropped_malformed;
    return;
  }
  ExpertMessage& m = *decoded;
  if (m.kind != ExpertKind::Forward && m.kind != ExpertKind::Backward) {
    ++stats_.dropped_unexpected;
    return;
  }
  if (const auto error = check(m)) {
    refuse(from, m.request_id, *error);
    return;
  }
  if (queue_.size() >= config_.max_queued_requests) {
    refuse(from, m.request_id, ExpertError::Overloaded);
    return;
  }
  ++(m.kind == ExpertKind::Forward ? stats_.forward_requests : stats_.backward_requests);
  queue_.push_back({from, std::move(m)});
  pump();
}

void ExpertRuntime::on_link_failure(PeerId peer) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->from == peer) {
      ++stats_.abandoned;
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

void ExpertRuntime::pump() {
  if (busy_ || queue_.empty()) return;
  std::vector<Request> batch;
  batch.push_back(std::move(queue_.front()));
  queue_.pop_front();
  const ExpertKind kind = batch[0].message.kind;
  const ExpertUid uid = batch[0].message.uid;
  std::uint32_t rows = batch[0].message.tensor.rows;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->message.kind == kind && it->message.uid == uid && rows + it->message.tensor.rows <= config_.max_batch_rows) {
      rows += it->message.tensor.rows;
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<const Tensor*> inputs, grads;
  for (const Request& r : batch) {
    inputs.push_back(&r.message.tensor);
    grads.push_back(&r.message.grad_output);
  }
  Tensor input = concat_rows(inputs);
  busy_ = true;
  ++stats_.batches;
  stats_.rows += rows;
  auto finish = [this, alive = alive_, b = std::make_shared<std::vector<Request>>(std::move(batch))](Tensor result) {
    if (!*alive) return;
    finish_batch(std::move(*b), std::move(result));
  };
  if (kind == ExpertKind::Forward) backend_.forward(uid, input, std::move(finish));
  else backend_.backward(uid, input, concat_rows(grads), std::move(finish));
}

void ExpertRuntime::finish_batch(std::vector<Request> batch, Tensor result) {
  busy_ = false;
  std::uint32_t first = 0;
  for (const Request& r : batch) {
    ExpertMessage reply;
    reply.kind = ExpertKind::Output;
    reply.request_id = r.message.request_id;
    reply.tensor = slice_rows(result, first, r.message.tensor.rows);
    first += r.message.tensor.rows;
    ++stats_.replies;
    env_.send(r.from, encode_expert(reply));
  }
  pump();
}

}  // namespace swarmlab::core::dmoe
