#pragma once
// The live stand-in for training compute (v1): a worker thread that "processes" N samples by
// sleeping N / samples_per_second, one job at a time as an accelerator would, and posts each
// completion to the event loop. Real training (libtorch) replaces the sleep in a later version;
// the asynchronous shape - submit, keep serving the network, get called back on the loop - is the
// one the core relies on (core/env.h).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "exec/event_loop.h"

namespace swarmlab::exec {

class ComputeWorker {
 public:
  ComputeWorker(EventLoop& loop, double samples_per_second);
  ~ComputeWorker();  // abandons queued jobs; their callbacks never run
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  // Queues a job; `done` runs on the loop thread when it finishes, unless cancelled first.
  // Throws std::logic_error when this peer has no compute (samples_per_second == 0).
  std::uint64_t submit(std::uint64_t samples, std::function<void()> done);
  // Cancels a queued or running job (called on the loop thread). Unknown ids are ignored.
  void cancel(std::uint64_t id);

 private:
  struct Job {
    std::uint64_t id;
    double seconds;
    std::function<void()> done;
  };
  void work();

  EventLoop& loop_;
  double samples_per_second_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::uint64_t running_ = 0;
  bool running_cancelled_ = false;
  bool stopping_ = false;
  std::uint64_t next_id_ = 1;
  // Jobs finished and posted to the loop but not yet run there; cancel() may still stop them.
  // Shared with the posted callbacks, which may outlive the worker.
  struct Posted {
    std::mutex mutex;
    std::set<std::uint64_t> pending, cancelled;
    bool gone = false;
  };
  std::shared_ptr<Posted> posted_ = std::make_shared<Posted>();
  std::thread thread_;
};

}  // namespace swarmlab::exec
