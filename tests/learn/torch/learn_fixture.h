#pragma once
// Shared by the learner tests: the peer's thread as a queue the test thread drains (what the live
// EventLoop's post() is), and Fashion-MNIST loaded once per test binary.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "learn/fashion_mnist.h"
#include "learn/torch/torch_learner.h"

namespace swarmlab::learn::testing {

class PostQueue {
 public:
  TorchLearner::Post poster() {
    return [this](std::function<void()> f) {
      {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(f));
      }
      cv_.notify_all();
    };
  }
  // Runs posted callbacks on the calling thread until `done()` holds; false after `timeout_s`.
  bool run_until(const std::function<bool()>& done, double timeout_s = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!done()) {
      std::function<void()> f;
      {
        std::unique_lock lock(mutex_);
        if (!cv_.wait_until(lock, deadline, [this] { return !queue_.empty(); })) return false;
        f = std::move(queue_.front());
        queue_.pop_front();
      }
      f();
    }
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
};

inline std::shared_ptr<const LabelledImages> fashion_train() {
  static const auto set = std::make_shared<const LabelledImages>(load_fashion_mnist(Split::Train));
  return set;
}
inline std::shared_ptr<const LabelledImages> fashion_test() {
  static const auto set = std::make_shared<const LabelledImages>(load_fashion_mnist(Split::Test));
  return set;
}

// Runs one micro-batch of `n` samples to completion.
inline void compute_now(PostQueue& q, TorchLearner& l, std::uint64_t n) {
  bool done = false;
  l.compute(n, [&] { done = true; });
  if (!q.run_until([&] { return done; })) throw std::runtime_error("micro-batch did not finish");
}

}  // namespace swarmlab::learn::testing
