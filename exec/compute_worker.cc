#include "exec/compute_worker.h"

#include <chrono>
#include <stdexcept>

namespace swarmlab::exec {

ComputeWorker::ComputeWorker(EventLoop& loop, double samples_per_second)
    : loop_(loop), samples_per_second_(samples_per_second) {}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(posted_->mutex);
    posted_->gone = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t ComputeWorker::submit(std::uint64_t samples, std::function<void()> done) {
  if (!(samples_per_second_ > 0)) throw std::logic_error("compute: this peer has no compute (compute_sps = 0)");
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t id = next_id_++;
  jobs_.push_back(Job{id, static_cast<double>(samples) / samples_per_second_, std::move(done)});
  if (!thread_.joinable()) thread_ = std::thread([this] { work(); });  // started on first use
  cv_.notify_all();
  return id;
}

void ComputeWorker::cancel(std::uint64_t id) {
  // Lock order: mutex_, then posted_->mutex (as in work()), so a job cannot slip from "running"
  // to "posted" between the two checks.
  std::lock_guard<std::mutex> lock(mutex_);
  {
    std::lock_guard<std::mutex> plock(posted_->mutex);
    if (posted_->pending.erase(id)) {
      posted_->cancelled.insert(id);
      return;
    }
  }
  if (running_ == id) {
    running_cancelled_ = true;
    cv_.notify_all();
    return;
  }
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
    if (it->id == id) {
      jobs_.erase(it);
      return;
    }
}

void ComputeWorker::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = job.id;
    running_cancelled_ = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(job.seconds);
    cv_.wait_until(lock, until, [this] { return stopping_ || running_cancelled_; });
    running_ = 0;
    if (stopping_) return;
    if (running_cancelled_) continue;
    {
      std::lock_guard<std::mutex> plock(posted_->mutex);
      posted_->pending.insert(job.id);
    }
    loop_.post([posted = posted_, id = job.id, done = std::move(job.done)] {
      {
        std::lock_guard<std::mutex> plock(posted->mutex);
        if (posted->gone || posted->cancelled.erase(id)) return;
        posted->pending.erase(id);
      }
      done();
    });
  }
}

}  // namespace swarmlab::exec
