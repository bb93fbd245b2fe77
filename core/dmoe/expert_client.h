#pragma once
// A trainer's side of the expert protocol (docs/learning-at-home.md §4): sends forward and backward
// requests to runtimes and calls back exactly once per request, later and never inside the call,
// with the result or with why there is none (an Error reply, a timeout, a broken link, or a runtime
// id that names no other peer). Replies that match nothing pending (late,
// duplicated, forged) are counted and dropped.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "core/dmoe/expert_messages.h"
#include "core/env.h"
#include "core/service.h"

namespace swarmlab::core::dmoe {

enum class CallFailure : std::uint8_t { None = 0, Refused, TimedOut, LinkFailed, BadReply };
const char* call_failure_name(CallFailure f);

struct ClientConfig {
  Seconds forward_timeout_s = 10;   // no answer by then: the expert counts as failed
  Seconds backward_timeout_s = 20;
};

struct ClientStats {
  std::uint64_t requests = 0, answered = 0, refused = 0, timed_out = 0, link_failed = 0, bad_replies = 0;
  std::uint64_t dropped_malformed = 0, dropped_unexpected = 0;
};

class ExpertClient final : public Service {
 public:
  struct Result {
    std::optional<Tensor> output;  // set when answered
    CallFailure failure = CallFailure::None;
    std::optional<ExpertError> error;  // with Refused
  };
  using Done = std::function<void(Result)>;

  ExpertClient(Environment& env, ClientConfig config = {});
  ~ExpertClient() override;

  // `expected_cols` is the width the answer must have (the expert's output width for forward, its
  // input width for backward); an answer of another shape fails as BadReply.
  void forward(PeerId runtime, const ExpertUid& uid, const Tensor& input, std::uint32_t expected_cols, Done done);
  void backward(PeerId runtime, const ExpertUid& uid, const Tensor& input, const Tensor& grad_output,
                std::uint32_t expected_cols, Done done);

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  const ClientStats& stats() const { return stats_; }
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    PeerId runtime = 0;
    std::uint32_t rows = 0, cols = 0;
    bool is_virtual = false;
    TimerHandle timer = 0;
    Done done;
  };
  void send(PeerId runtime, ExpertMessage m, std::uint32_t expected_cols, Seconds timeout, Done done);
  void finish(std::uint64_t request_id, Result result);

  Environment& env_;
  ClientConfig config_;
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_request_id_ = 1;
  ClientStats stats_;
};

}  // namespace swarmlab::core::dmoe
