// The one translation unit of the project that includes libtorch (learn/README.md: build weight,
// ABI). It is compiled with TORCH_CXX_FLAGS; its header keeps to ABI-neutral types.
#include "learn/torch/torch_learner.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "learn/learner_state.h"

namespace swarmlab::learn {
namespace {

using core::training::Mode;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Models: parameter layout in the flat vector, initialisation, forward pass.

struct ParamSpec {
  const char* name;
  std::vector<std::int64_t> shape;
  std::int64_t fan_in;  // for the initial range, as PyTorch's default for Linear/Conv2d
};

std::vector<ParamSpec> model_specs(Model model) {
  switch (model) {
    case Model::Linear:
      return {{"fc.weight", {10, 784}, 784}, {"fc.bias", {10}, 784}};
    case Model::Cnn:
      return {{"conv1.weight", {8, 1, 3, 3}, 9},    {"conv1.bias", {8}, 9},       {"conv2.weight", {16, 8, 3, 3}, 72},
              {"conv2.bias", {16}, 72},             {"fc1.weight", {128, 784}, 784}, {"fc1.bias", {128}, 784},
              {"fc2.weight", {10, 128}, 128},       {"fc2.bias", {10}, 128}};
    case Model::Mlp:
      return {{"fc1.weight", {2048, 784}, 784}, {"fc1.bias", {2048}, 784},   {"fc2.weight", {1024, 2048}, 2048},
              {"fc2.bias", {1024}, 2048},       {"fc3.weight", {10, 1024}, 1024}, {"fc3.bias", {10}, 1024}};
  }
  throw std::invalid_argument("unknown model");
}

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::uint64_t identity_of(Model model, Mode mode) {
  std::string desc = "swarmlab.learn.TorchLearner/1|";
  desc += std::string(core::name_of(kModelNames, model)) + "|" + std::string(core::training::name(mode));
  for (const auto& p : model_specs(model)) {
    desc += std::string("|") + p.name + ":";
    for (auto d : p.shape) desc += std::to_string(d) + ",";
  }
  return fnv1a(desc);
}

// Uniform in +-1/sqrt(fan_in) from our own hash (not torch's generator), so every peer and every
// libtorch build starts from the same bits.
std::vector<float> initial_parameters(Model model, std::uint64_t seed) {
  std::vector<float> out;
  std::uint64_t t = 0;
  for (const auto& p : model_specs(model)) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(p.fan_in));
    const std::uint64_t key = mix64(seed ^ mix64(++t));
    const std::int64_t n = numel(p.shape);
    for (std::int64_t j = 0; j < n; ++j) {
      const float u = static_cast<float>(mix64(key + static_cast<std::uint64_t>(j)) >> 40) * 0x1p-24f;
      out.push_back((2.0f * u - 1.0f) * bound);
    }
  }
  return out;
}

class Net {
 public:
  explicit Net(Model model) : model_(model) {
    std::int64_t offset = 0;
    for (auto& p : model_specs(model)) {
      offsets_.push_back(offset);
      offset += numel(p.shape);
      shapes_.push_back(std::move(p.shape));
    }
    size_ = offset;
  }
  std::int64_t size() const { return size_; }

  // Logits for x [n, 1, 28, 28]; the parameters are differentiable views into the flat vector.
  at::Tensor forward(const at::Tensor& flat, const at::Tensor& x) const {
    auto w = [&](std::size_t i) { return flat.narrow(0, offsets_[i], numel(shapes_[i])).view(shapes_[i]); };
    switch (model_) {
      case Model::Linear:
        return at::linear(x.flatten(1), w(0), w(1));
      case Model::Cnn: {
        at::Tensor h = at::max_pool2d(at::relu(at::conv2d(x, w(0), w(1), {1, 1}, {1, 1})), {2, 2});
        h = at::max_pool2d(at::relu(at::conv2d(h, w(2), w(3), {1, 1}, {1, 1})), {2, 2});
        h = at::relu(at::linear(h.flatten(1), w(4), w(5)));
        return at::linear(h, w(6), w(7));
      }
      case Model::Mlp: {
        at::Tensor h = at::relu(at::linear(x.flatten(1), w(0), w(1)));
        h = at::relu(at::linear(h, w(2), w(3)));
        return at::linear(h, w(4), w(5));
      }
    }
    throw std::invalid_argument("unknown model");
  }

 private:
  Model model_;
  std::vector<std::int64_t> offsets_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::int64_t size_ = 0;
};

// The state's bytes are learn/learner_state.h's: k vectors of n values.
std::uint32_t vectors_in_state(Mode mode) { return mode == Mode::Dedloc ? 2 : 4; }

std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

std::uint64_t model_parameter_count(Model model) { return static_cast<std::uint64_t>(Net(model).size()); }

// ---------------------------------------------------------------------------------------------

struct TorchLearner::Impl {
  struct MicroBatch {
    std::vector<float> vector;  // DeDLOC: gradient of the summed loss; DiLoCo: before - params
    double loss_sum = 0;
    std::exception_ptr error;
  };

  Impl(TorchLearnerConfig c, std::shared_ptr<const LabelledImages> t, std::unique_ptr<SampleStream> s, Post p)
      : config(c), train(std::move(t)), stream(std::move(s)), post(std::move(p)), net(c.model),
        n(static_cast<std::uint64_t>(net.size())), identity(identity_of(c.model, c.mode)) {}

  // ---- worker side: every tensor below is touched only by jobs on the worker thread.
  void start() {
    if (config.threads > 0) at::set_num_threads(config.threads);
    const bool cuda = config.device == Device::Cuda || (config.device == Device::Auto && torch::cuda::is_available());
    if (cuda && !torch::cuda::is_available()) throw std::runtime_error("torch learner: CUDA asked for, none available");
    device = cuda ? at::Device(at::kCUDA) : at::Device(at::kCPU);
    if (cuda) {
      // Same bits for the same inputs: no autotuned algorithms, no TF32 (the equivalence test
      // compares to 1e-5).
      at::globalContext().setDeterministicCuDNN(true);
      at::globalContext().setBenchmarkCuDNN(false);
      at::globalContext().setAllowTF32CuBLAS(false);
      at::globalContext().setAllowTF32CuDNN(false);
    }
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
    std::vector<float> init = initial_parameters(config.model, config.model_seed);
    params = from_vector(init).set_requires_grad(true);
    if (config.mode == Mode::Dedloc) {
      momentum = at::zeros({static_cast<std::int64_t>(n)}, f32);
    } else {
      before = params.detach().clone();
      outer_momentum = at::zeros({static_cast<std::int64_t>(n)}, f32);
      adam_m = at::zeros({static_cast<std::int64_t>(n)}, f32);
      adam_v = at::zeros({static_cast<std::int64_t>(n)}, f32);
    }
    // The training set stays in the caller's memory on the CPU (read-only); a GPU gets a copy.
    images = at::from_blob(const_cast<std::uint8_t*>(train->pixels.data()),
                           {static_cast<std::int64_t>(train->count), 1, train->rows, train->cols}, at::kByte);
    labels = at::from_blob(const_cast<std::uint8_t*>(train->labels.data()), {static_cast<std::int64_t>(train->count)},
                           at::kByte)
                 .to(at::kLong);
    if (cuda) {
      images = images.to(device);
      labels = labels.to(device);
    }
    thread = std::thread([this] { work(); });
  }

  at::Tensor from_vector(const std::vector<float>& v) const {
    return at::from_blob(const_cast<float*>(v.data()), {static_cast<std::int64_t>(v.size())}, at::kFloat)
        .to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  }

  at::Tensor normalise(at::Tensor pixels) const {
    return pixels.to(at::kFloat).div_(255.0f).sub_(kPixelMean).div_(kPixelStd);
  }

  void run_micro_batch(const std::vector<std::uint32_t>& indices, MicroBatch& out) {
    const at::Tensor index =
        at::from_blob(const_cast<std::uint32_t*>(indices.data()), {static_cast<std::int64_t>(indices.size())}, at::kInt)
            .to(device, at::kLong);
    const at::Tensor x = normalise(images.index_select(0, index));
    const at::Tensor y = labels.index_select(0, index);
    const bool dedloc = config.mode == Mode::Dedloc;
    // DeDLOC sums the loss (the accumulator holds gradient sums; the hand-over divides once);
    // DiLoCo's inner step uses the mean, as a local optimizer would.
    const at::Tensor loss =
        at::cross_entropy_loss(net.forward(params, x), y, {}, dedloc ? at::Reduction::Sum : at::Reduction::Mean);
    const at::Tensor grad = torch::autograd::grad({loss}, {params})[0];
    out.loss_sum = loss.item<double>() * (dedloc ? 1.0 : static_cast<double>(indices.size()));
    if (dedloc) {
      out.vector = to_vector(grad);
      return;
    }
    at::NoGradGuard no_grad;
    const std::uint64_t t = ++inner_steps_applied;
    double lr = config.inner_lr;
    if (config.inner_warmup_steps > 0 && t <= config.inner_warmup_steps)
      lr *= static_cast<double>(t) / static_cast<double>(config.inner_warmup_steps);
    // AdamW as PyTorch writes it (decoupled decay, bias corrections).
    const double b1 = config.inner_beta1, b2 = config.inner_beta2;
    params.mul_(1.0 - lr * config.inner_weight_decay);
    adam_m.mul_(b1).add_(grad, 1.0 - b1);
    adam_v.mul_(b2).addcmul_(grad, grad, 1.0 - b2);
    const double bc1 = 1.0 - std::pow(b1, static_cast<double>(t));
    const double bc2 = 1.0 - std::pow(b2, static_cast<double>(t));
    const at::Tensor denom = (adam_v.sqrt() / std::sqrt(bc2)).add_(config.inner_eps);
    params.addcdiv_(adam_m, denom, -lr / bc1);
    out.vector = to_vector(before - params);
  }

  void apply_step(const std::vector<float>& averaged) {
    at::NoGradGuard no_grad;
    at::Tensor g = from_vector(averaged);
    if (config.mode == Mode::Dedloc) {
      if (config.weight_decay != 0) g.add_(params, config.weight_decay);
      // PyTorch's SGD: buf = momentum * buf + g (the first step starts from buf = g, which the
      // zero buffer gives exactly), param -= lr * buf.
      if (config.momentum != 0) {
        momentum.mul_(config.momentum).add_(g);
        g = momentum;
      }
      params.add_(g, -config.lr);
    } else {
      // Back to the shared parameters, then SGD with Nesterov momentum on the pseudo-gradient.
      outer_momentum.mul_(config.outer_momentum).add_(g);
      const at::Tensor update = g.add(outer_momentum, config.outer_momentum);
      params.copy_(before);
      params.add_(update, -config.outer_lr);
      before.copy_(params);
    }
    ++steps_applied;
  }

  void reset_to_before() {
    at::NoGradGuard no_grad;
    params.copy_(before);
  }

  std::vector<std::uint8_t> serialise() const {
    std::vector<at::Tensor> vectors;
    if (config.mode == Mode::Dedloc) vectors = {params, momentum};
    else vectors = {before, outer_momentum, adam_m, adam_v};
    LearnerState state;
    state.steps = steps_applied;
    state.inner_steps = inner_steps_applied;
    for (const auto& t : vectors) state.vectors.push_back(to_vector(t));
    return encode_learner_state(identity, state);
  }

  // Runs on the peer's thread: every check before anything changes.
  LearnerState parse(std::span<const std::uint8_t> bytes) const {
    const std::string model = std::string(core::name_of(kModelNames, config.model)) + ", " +
                              std::string(core::training::name(config.mode));
    return decode_learner_state(bytes, {identity, n, vectors_in_state(config.mode)}, model);
  }

  void load(const LearnerState& s) {
    at::NoGradGuard no_grad;
    if (config.mode == Mode::Dedloc) {
      params.copy_(from_vector(s.vectors[0]));
      momentum.copy_(from_vector(s.vectors[1]));
    } else {
      before.copy_(from_vector(s.vectors[0]));
      params.copy_(before);
      outer_momentum.copy_(from_vector(s.vectors[1]));
      adam_m.copy_(from_vector(s.vectors[2]));
      adam_v.copy_(from_vector(s.vectors[3]));
    }
    steps_applied = s.steps;
    inner_steps_applied = s.inner_steps;
  }

  Evaluation run_evaluation(const LabelledImages& test) const {
    if (test.rows != train->rows || test.cols != train->cols)
      throw std::invalid_argument("evaluate: test images are not " + std::to_string(train->rows) + " x " +
                                  std::to_string(train->cols));
    at::NoGradGuard no_grad;
    Evaluation e;
    double loss = 0;
    std::int64_t correct = 0;
    constexpr std::int64_t kChunk = 1000;
    const auto count = static_cast<std::int64_t>(test.count);
    for (std::int64_t from = 0; from < count; from += kChunk) {
      const std::int64_t m = std::min(kChunk, count - from);
      const at::Tensor x = normalise(
          at::from_blob(const_cast<std::uint8_t*>(test.pixels.data()) + from * test.rows * test.cols,
                        {m, 1, test.rows, test.cols}, at::kByte)
              .to(device));
      const at::Tensor y =
          at::from_blob(const_cast<std::uint8_t*>(test.labels.data()) + from, {m}, at::kByte).to(device, at::kLong);
      const at::Tensor logits = net.forward(params, x);
      loss += at::cross_entropy_loss(logits, y, {}, at::Reduction::Sum).item<double>();
      correct += logits.argmax(1).eq(y).sum().item<std::int64_t>();
    }
    e.samples = test.count;
    e.accuracy = count ? static_cast<double>(correct) / static_cast<double>(count) : 0.0;
    e.loss = count ? loss / static_cast<double>(count) : 0.0;
    return e;
  }

  // ---- the worker thread and its queue
  // A job whose caller does not wait (a step, a reset, a load) keeps its error for the next call
  // from the peer's thread (check()).
  void enqueue_step(std::function<void()> job) {
    enqueue([this, job = std::move(job)] {
      try {
        job();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  void check() {
    std::lock_guard lock(mutex);
    if (failure) std::rethrow_exception(failure);
  }

  void enqueue(std::function<void()> job) {
    {
      std::lock_guard lock(mutex);
      jobs.push_back(std::move(job));
    }
    cv.notify_one();
  }

  template <class F>
  auto run_sync(F fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    enqueue([&task] { task(); });
    return result.get();
  }

  void work() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [this] { return stopping || !jobs.empty(); });
        if (stopping) return;
        job = std::move(jobs.front());
        jobs.pop_front();
        busy_since = Clock::now();
        busy_running = true;
      }
      job();
      std::lock_guard lock(mutex);
      busy_seconds += std::chrono::duration<double>(Clock::now() - busy_since).count();
      busy_running = false;
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
      jobs.clear();
    }
    cv.notify_one();
    if (thread.joinable()) thread.join();
  }

  // ---- the peer's thread
  void deliver(const MicroBatch& mb, std::uint64_t first, std::uint64_t count, std::uint64_t version,
               std::uint64_t generation_at_submit, std::vector<float>&& vector) {
    in_flight = false;
    if (mb.error) std::rethrow_exception(mb.error);
    samples_done += count;
    loss_sum += mb.loss_sum;
    loss_samples += count;
    accumulated_samples += count;
    current.push_back({first, count, version});
    if (vector.empty()) return;  // an empty micro-batch
    if (config.mode == Mode::Dedloc) {
      if (accumulated.empty()) {
        accumulated = std::move(vector);
      } else {
        for (std::size_t i = 0; i < accumulated.size(); ++i) accumulated[i] += vector[i];
      }
    } else {
      ++inner_steps;
      // An inner step asked for before the last reset was undone by it: the difference it
      // measured is no longer the parameters'.
      if (generation_at_submit == generation) accumulated = std::move(vector);
    }
  }

  TorchLearnerConfig config;
  std::shared_ptr<const LabelledImages> train;
  std::unique_ptr<SampleStream> stream;
  Post post;
  Net net;
  std::uint64_t n;
  std::uint64_t identity;
  at::Device device{at::kCPU};

  // Worker-only.
  at::Tensor params, momentum, before, outer_momentum, adam_m, adam_v, images, labels;
  std::uint64_t steps_applied = 0, inner_steps_applied = 0;

  // Peer-thread-only.
  std::vector<float> accumulated;  // DeDLOC: gradient sums; DiLoCo: the latest before - params
  std::uint64_t accumulated_samples = 0;
  std::vector<float> handed;
  bool handing = false;
  std::vector<MicroBatchRecord> current, last_handover;
  std::uint64_t version = 0, generation = 0;
  bool in_flight = false;
  std::uint64_t samples_done = 0, steps = 0, inner_steps = 0;
  double loss_sum = 0;
  std::uint64_t loss_samples = 0;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);

  // The queue (guarded by mutex).
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  std::exception_ptr failure;
  double busy_seconds = 0;
  bool busy_running = false;
  Clock::time_point busy_since;
  std::thread thread;
};

// ---------------------------------------------------------------------------------------------

TorchLearner::TorchLearner(TorchLearnerConfig config, std::shared_ptr<const LabelledImages> train,
                           std::unique_ptr<SampleStream> stream, Post post) {
  if (!train || train->count == 0) throw std::invalid_argument("torch learner: empty training set");
  if (train->rows != kFashionMnistSide || train->cols != kFashionMnistSide)
    throw std::invalid_argument("torch learner: the models take 28 x 28 images");
  if (!stream) throw std::invalid_argument("torch learner: no sample stream");
  if (!post) throw std::invalid_argument("torch learner: no way to post completions");
  impl_ = std::make_unique<Impl>(config, std::move(train), std::move(stream), std::move(post));
  impl_->start();
}

TorchLearner::~TorchLearner() {
  *impl_->alive = false;
  impl_->stop();
}

std::uint64_t TorchLearner::parameter_count() const { return impl_->n; }

std::uint64_t TorchLearner::state_bytes() const {
  return learner_state_bytes({impl_->identity, impl_->n, vectors_in_state(impl_->config.mode)});
}

void TorchLearner::compute(std::uint64_t samples, std::function<void()> done) {
  Impl& m = *impl_;
  m.check();
  if (m.in_flight) throw std::logic_error("torch learner: compute() while a micro-batch is in flight");
  const std::uint64_t first = m.stream->position();
  std::vector<std::uint32_t> indices;
  m.stream->next(samples, indices);
  for (std::uint32_t i : indices)
    if (i >= m.train->count)
      throw std::out_of_range("torch learner: sample " + std::to_string(i) + " outside the training set of " +
                              std::to_string(m.train->count));
  m.in_flight = true;
  const std::uint64_t version = m.version, generation = m.generation;
  m.enqueue([&m, indices = std::move(indices), done = std::move(done), first, samples, version, generation]() mutable {
    auto mb = std::make_shared<Impl::MicroBatch>();
    if (!indices.empty()) {
      try {
        m.run_micro_batch(indices, *mb);
      } catch (...) {
        mb->error = std::current_exception();
      }
    }
    m.post([&m, alive = m.alive, mb, done = std::move(done), first, samples, version, generation]() mutable {
      if (!*alive) return;
      std::vector<float> vector = std::move(mb->vector);
      m.deliver(*mb, first, samples, version, generation, std::move(vector));
      done();
    });
  });
}

double TorchLearner::compute_seconds() const {
  std::lock_guard lock(impl_->mutex);
  double s = impl_->busy_seconds;
  if (impl_->busy_running) s += std::chrono::duration<double>(Clock::now() - impl_->busy_since).count();
  return s;
}

std::span<float> TorchLearner::begin_averaging(std::uint64_t) {
  Impl& m = *impl_;
  m.check();
  if (m.handing) throw std::logic_error("torch learner: begin_averaging() before the last round was applied");
  m.handed = std::move(m.accumulated);
  m.accumulated.clear();
  if (m.handed.empty()) m.handed.assign(m.n, 0.0f);
  if (m.config.mode == Mode::Dedloc && m.accumulated_samples > 0) {
    const float count = static_cast<float>(m.accumulated_samples);
    for (float& v : m.handed) v /= count;
  }
  if (m.config.mode == Mode::Diloco) ++m.generation;
  m.accumulated_samples = 0;
  m.last_handover = std::move(m.current);
  m.current.clear();
  m.handing = true;
  return m.handed;
}

void TorchLearner::apply_averaged() {
  Impl& m = *impl_;
  if (!m.handing) throw std::logic_error("torch learner: apply_averaged() without a hand-over");
  m.handing = false;
  ++m.version;
  ++m.steps;
  if (m.config.mode == Mode::Diloco) {
    ++m.generation;
    m.accumulated.clear();
  }
  m.enqueue_step([&m, averaged = std::move(m.handed)] { m.apply_step(averaged); });
  m.handed.clear();
}

void TorchLearner::discard() {
  Impl& m = *impl_;
  m.accumulated.clear();
  m.accumulated_samples = 0;
  m.current.clear();
  m.handed.clear();
  m.handing = false;
  if (m.config.mode == Mode::Diloco) {
    // The inner steps are thrown away too: back to the shared parameters.
    ++m.version;
    ++m.generation;
    m.enqueue_step([&m] { m.reset_to_before(); });
  }
}

std::vector<std::uint8_t> TorchLearner::export_state() const {
  Impl& m = *impl_;
  return m.run_sync([&m] { return m.serialise(); });
}

void TorchLearner::import_state(std::span<const std::uint8_t> bytes) {
  Impl& m = *impl_;
  auto state = std::make_shared<LearnerState>(m.parse(bytes));
  ++m.version;
  m.steps = state->steps;
  m.inner_steps = state->inner_steps;
  if (m.config.mode == Mode::Diloco) {
    ++m.generation;
    m.accumulated.clear();
  }
  m.enqueue_step([&m, state] { m.load(*state); });
}

std::optional<double> TorchLearner::take_loss() {
  Impl& m = *impl_;
  if (m.loss_samples == 0) return std::nullopt;
  const double mean = m.loss_sum / static_cast<double>(m.loss_samples);
  m.loss_sum = 0;
  m.loss_samples = 0;
  return mean;
}

const std::vector<MicroBatchRecord>& TorchLearner::handover() const { return impl_->last_handover; }
std::uint64_t TorchLearner::parameter_version() const { return impl_->version; }
std::uint64_t TorchLearner::optimizer_steps() const { return impl_->steps; }
std::uint64_t TorchLearner::inner_steps() const { return impl_->inner_steps; }
std::uint64_t TorchLearner::samples_computed() const { return impl_->samples_done; }

std::vector<float> TorchLearner::parameters() const {
  Impl& m = *impl_;
  return m.run_sync([&m] { return to_vector(m.params); });
}

void TorchLearner::parameters_async(std::function<void(std::vector<float>)> done) {
  Impl& m = *impl_;
  m.enqueue([&m, done = std::move(done)]() mutable {
    auto values = std::make_shared<std::vector<float>>(to_vector(m.params));
    m.post([alive = m.alive, values, done = std::move(done)] {
      if (*alive) done(std::move(*values));
    });
  });
}

Evaluation TorchLearner::evaluate(const LabelledImages& test) const {
  Impl& m = *impl_;
  return m.run_sync([&m, &test] { return m.run_evaluation(test); });
}

void TorchLearner::evaluate_async(std::shared_ptr<const LabelledImages> test, std::function<void(Evaluation)> done) {
  Impl& m = *impl_;
  m.enqueue([&m, test = std::move(test), done = std::move(done)]() mutable {
    auto e = std::make_shared<Evaluation>();
    std::exception_ptr error;
    try {
      *e = m.run_evaluation(*test);
    } catch (...) {
      error = std::current_exception();
    }
    m.post([alive = m.alive, e, error, done = std::move(done)] {
      if (!*alive) return;
      if (error) std::rethrow_exception(error);
      done(*e);
    });
  });
}

std::uint64_t TorchLearner::model_identity() const { return impl_->identity; }
bool TorchLearner::on_cuda() const { return impl_->device.is_cuda(); }

}  // namespace swarmlab::learn
