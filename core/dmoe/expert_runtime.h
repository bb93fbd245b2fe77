#pragma once
// An expert runtime (docs/learning-at-home.md §5): hosts experts, takes forward and backward
// requests from any trainer, batches them and answers each. A malformed request is counted and
// dropped; a well-formed one it cannot serve (unknown uid, wrong shape, NaN, queue full) gets an
// Error reply. Nothing a trainer sends can make it throw.
//
// Batching: when the backend is free the runtime takes the oldest queued request and, behind it in
// queue order, every other request of the same kind for the same expert, up to max_batch_rows rows,
// and hands them to the backend as one batch; the rows of the result go back to their requesters.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>

#include "core/dmoe/expert_backend.h"
#include "core/dmoe/expert_messages.h"
#include "core/env.h"
#include "core/service.h"

namespace swarmlab::core::dmoe {

struct RuntimeConfig {
  std::uint32_t max_batch_rows = 4096;     // rows handed to the backend at once
  std::size_t max_queued_requests = 1024;  // beyond this, requests are refused as Overloaded
};

struct RuntimeStats {
  std::uint64_t forward_requests = 0, backward_requests = 0;  // accepted into the queue
  std::uint64_t batches = 0, rows = 0;                        // handed to the backend
  std::uint64_t replies = 0;                                  // Output messages sent
  std::uint64_t refused = 0;                                  // Error replies sent
  std::uint64_t dropped_malformed = 0;                        // could not be decoded
  std::uint64_t dropped_unexpected = 0;                       // an Output or Error sent to a runtime
  std::uint64_t abandoned = 0;                                // queued for a peer whose link broke
};

class ExpertRuntime final : public Service {
 public:
  ExpertRuntime(Environment& env, ExpertGrid grid, ExpertBackend& backend, RuntimeConfig config = {});
  ~ExpertRuntime() override { *alive_ = false; }
  ExpertRuntime(const ExpertRuntime&) = delete;
  ExpertRuntime& operator=(const ExpertRuntime&) = delete;

  // Starts serving `uid`, fresh or from a checkpoint (CheckpointError when it does not fit).
  // std::invalid_argument for a uid outside the grid.
  void host(const ExpertUid& uid);
  void host(const ExpertUid& uid, std::span<const std::uint8_t> checkpoint);
  // Stops serving `uid`; its queued requests are refused as UnknownExpert.
  void drop(const ExpertUid& uid);
  bool hosts(const ExpertUid& uid) const { return experts_.contains(uid); }
  const std::set<ExpertUid>& experts() const { return experts_; }
  const ExpertGrid& grid() const { return grid_; }
  // The expert's checkpoint from the backend (expert_keeper.h stores it in the DHT).
  std::vector<std::uint8_t> checkpoint(const ExpertUid& uid) const { return backend_.checkpoint(uid); }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  const RuntimeStats& stats() const { return stats_; }
  std::size_t queued() const { return queue_.size(); }

 private:
  struct Request {
    PeerId from = 0;
    ExpertMessage message;
  };
  void refuse(PeerId to, std::uint64_t request_id, ExpertError error);
  // Why this request cannot be served, if it cannot.
  std::optional<ExpertError> check(const ExpertMessage& m) const;
  void pump();
  void finish_batch(std::vector<Request> batch, Tensor result);

  Environment& env_;
  ExpertGrid grid_;
  ExpertBackend& backend_;
  RuntimeConfig config_;
  std::set<ExpertUid> experts_;
  std::deque<Request> queue_;
  bool busy_ = false;
  RuntimeStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Rows [first, first + count) of `t` (virtual stays virtual).
Tensor slice_rows(const Tensor& t, std::uint32_t first, std::uint32_t count);
// The rows of every tensor, one after another; all must have the same cols and the same kind.
Tensor concat_rows(const std::vector<const Tensor*>& parts);

}  // namespace swarmlab::core::dmoe
