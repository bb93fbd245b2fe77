// The second translation unit that includes libtorch (learn/README.md): Learning@home's experts
// and a DMoE trainer's own layers. Compiled with TORCH_CXX_FLAGS; its header is ABI-neutral.
#include "learn/torch/torch_dmoe.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "learn/expert_checkpoint.h"
#include "learn/sample_stream.h"

namespace swarmlab::learn {
namespace {

using core::dmoe::ExpertUid;
using DmoeTensor = core::dmoe::Tensor;

at::Device pick_device(Device d, const char* who) {
  const bool cuda = d == Device::Cuda || (d == Device::Auto && torch::cuda::is_available());
  if (cuda && !torch::cuda::is_available()) throw std::runtime_error(std::string(who) + ": CUDA asked for, none available");
  return cuda ? at::Device(at::kCUDA) : at::Device(at::kCPU);
}

// Uniform in ±1/√fan_in from the project's hash (as torch_learner.cc): the same bits on every
// machine and libtorch build.
at::Tensor uniform_init(std::uint64_t key, std::vector<std::int64_t> shape, std::int64_t fan_in, at::Device device) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  for (std::int64_t j = 0; j < n; ++j) {
    const float u = static_cast<float>(mix64(key + static_cast<std::uint64_t>(j)) >> 40) * 0x1p-24f;
    v[static_cast<std::size_t>(j)] = (2.0f * u - 1.0f) * bound;
  }
  return at::from_blob(v.data(), shape, at::kFloat).to(device, at::kFloat, false, true);
}

at::Tensor to_torch(const DmoeTensor& t, at::Device device) {
  if (t.is_virtual || t.values.size() != t.elements()) throw std::invalid_argument("torch dmoe: a tensor without its values");
  return at::from_blob(const_cast<float*>(t.values.data()), {static_cast<std::int64_t>(t.rows), static_cast<std::int64_t>(t.cols)},
                       at::kFloat)
      .to(device, at::kFloat, false, true);
}

DmoeTensor from_torch(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();
  DmoeTensor out;
  out.rows = static_cast<std::uint32_t>(c.size(0));
  out.cols = static_cast<std::uint32_t>(c.size(1));
  out.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return out;
}

// Adam (Kingma & Ba) on one parameter tensor, in place, without autograd.
struct Adam {
  at::Tensor m, v;
  void step(at::Tensor& p, const at::Tensor& g, std::uint64_t t, double lr) {
    constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    at::NoGradGuard no_grad;
    if (!m.defined()) m = at::zeros_like(p), v = at::zeros_like(p);
    m.mul_(b1).add_(g, 1 - b1);
    v.mul_(b2).addcmul_(g, g, 1 - b2);
    const double c1 = 1 - std::pow(b1, static_cast<double>(t)), c2 = 1 - std::pow(b2, static_cast<double>(t));
    p.addcdiv_(m, v.div(c2).sqrt_().add_(eps), -lr / c1);
  }
};

std::uint64_t uid_key(std::uint64_t seed, const ExpertUid& uid) {
  std::uint64_t k = mix64(seed ^ 0xe4e47ull);
  for (const std::uint32_t c : uid) k = mix64(k ^ (c + 1));
  return k;
}

}  // namespace

void set_intra_op_threads(int n) {
  if (n > 0) at::set_num_threads(n);
}

std::uint64_t expert_parameter_count(const TorchExpertConfig& c) { return expert_checkpoint_values(c.width, c.hidden); }

// ---------------------------------------------------------------------------------------------

struct TorchExpertBackend::Impl {
  struct Expert {
    std::vector<at::Tensor> params;  // w1 [hidden, width], b1 [hidden], w2 [width, hidden], b2 [width]
    std::vector<Adam> adam;
    std::uint64_t updates = 0;
  };
  TorchExpertConfig config;
  Post post;
  at::Device device{at::kCPU};
  std::map<ExpertUid, Expert> experts;

  std::vector<std::vector<std::int64_t>> shapes() const {
    const auto w = static_cast<std::int64_t>(config.width), h = static_cast<std::int64_t>(config.hidden);
    return {{h, w}, {h}, {w, h}, {w}};
  }
  Expert fresh(const ExpertUid& uid) const {
    Expert e;
    const auto s = shapes();
    const std::int64_t fan_in[] = {s[0][1], s[0][1], s[2][1], s[2][1]};
    const std::uint64_t key = uid_key(config.seed, uid);
    for (std::size_t i = 0; i < s.size(); ++i) e.params.push_back(uniform_init(mix64(key + i), s[i], fan_in[i], device));
    e.adam.resize(s.size());
    return e;
  }
  Expert& at_uid(const ExpertUid& uid) {
    const auto it = experts.find(uid);
    if (it == experts.end()) throw std::out_of_range("torch experts: expert " + core::dmoe::uid_text(uid) + " is not hosted");
    return it->second;
  }
  static at::Tensor block(const std::vector<at::Tensor>& p, const at::Tensor& x) {
    return at::linear(at::relu(at::linear(x, p[0], p[1])), p[2], p[3]);
  }
};

TorchExpertBackend::TorchExpertBackend(TorchExpertConfig config, Post post) : impl_(std::make_unique<Impl>()) {
  if (config.width == 0 || config.hidden == 0) throw std::invalid_argument("torch experts: width and hidden must be >= 1");
  impl_->config = config;
  impl_->post = std::move(post);
  impl_->device = pick_device(config.device, "torch experts");
}
TorchExpertBackend::~TorchExpertBackend() = default;

std::uint32_t TorchExpertBackend::input_width() const { return impl_->config.width; }
std::uint32_t TorchExpertBackend::output_width() const { return impl_->config.width; }

void TorchExpertBackend::create(const ExpertUid& uid) { impl_->experts[uid] = impl_->fresh(uid); }
void TorchExpertBackend::remove(const ExpertUid& uid) { impl_->experts.erase(uid); }

std::uint64_t TorchExpertBackend::updates(const ExpertUid& uid) const {
  const auto it = impl_->experts.find(uid);
  return it == impl_->experts.end() ? 0 : it->second.updates;
}

// The checkpoint's bytes are learn/expert_checkpoint.h's: the parameters, then Adam's m and v,
// each flattened in the order of shapes().
std::vector<std::uint8_t> TorchExpertBackend::checkpoint(const ExpertUid& uid) const {
  const Impl::Expert& e = const_cast<Impl&>(*impl_).at_uid(uid);
  ExpertCheckpoint c;
  c.updates = e.updates;
  auto append = [](std::vector<float>& to, const at::Tensor& t) {
    const at::Tensor flat = t.detach().to(at::kCPU).contiguous();
    to.insert(to.end(), flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
  };
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    append(c.params, e.params[i]);
    append(c.adam_m, e.adam[i].m.defined() ? e.adam[i].m : at::zeros_like(e.params[i]));
    append(c.adam_v, e.adam[i].v.defined() ? e.adam[i].v : at::zeros_like(e.params[i]));
  }
  return encode_expert_checkpoint(impl_->config.width, impl_->config.hidden, c);
}

void TorchExpertBackend::load(const ExpertUid& uid, std::span<const std::uint8_t> bytes) {
  ExpertCheckpoint c = decode_expert_checkpoint(bytes, impl_->config.width, impl_->config.hidden);
  Impl::Expert e = impl_->fresh(uid);
  e.updates = c.updates;
  std::size_t at = 0;
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const at::Tensor like = e.params[i];
    auto take = [&](const std::vector<float>& from) {
      return at::from_blob(const_cast<float*>(from.data()) + at, like.sizes(), at::kFloat)
          .to(impl_->device, at::kFloat, false, true);
    };
    e.params[i] = take(c.params);
    e.adam[i].m = take(c.adam_m);
    e.adam[i].v = take(c.adam_v);
    at += static_cast<std::size_t>(like.numel());
  }
  impl_->experts[uid] = std::move(e);
}

void TorchExpertBackend::forward(const ExpertUid& uid, const DmoeTensor& input, std::function<void(DmoeTensor)> done) {
  DmoeTensor out;
  {
    at::NoGradGuard no_grad;
    out = from_torch(Impl::block(impl_->at_uid(uid).params, to_torch(input, impl_->device)));
  }
  impl_->post([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
}

void TorchExpertBackend::backward(const ExpertUid& uid, const DmoeTensor& input, const DmoeTensor& grad_output,
                                  std::function<void(DmoeTensor)> done) {
  Impl::Expert& e = impl_->at_uid(uid);
  std::vector<at::Tensor> params;
  for (const auto& p : e.params) params.push_back(p.detach().set_requires_grad(true));
  const at::Tensor x = to_torch(input, impl_->device).set_requires_grad(true);
  // Gradient checkpointing: the forward pass is recomputed here, not kept from the request.
  const at::Tensor y = Impl::block(params, x);
  std::vector<at::Tensor> wrt = params;
  wrt.push_back(x);
  const auto grads = torch::autograd::grad({y}, wrt, {to_torch(grad_output, impl_->device)});
  ++e.updates;
  for (std::size_t i = 0; i < e.params.size(); ++i) e.adam[i].step(e.params[i], grads[i], e.updates, impl_->config.lr);
  DmoeTensor out = from_torch(grads.back());
  impl_->post([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
}

// ---------------------------------------------------------------------------------------------

struct TorchDmoeTrainerModel::Impl {
  struct Batch {
    bool train = false;
    at::Tensor labels;
    at::Tensor h0;                      // the stem's output, with its graph (training)
    std::vector<at::Tensor> h, scores;  // per layer: the leaf h_l and the gate's scores on it
    std::vector<at::Tensor> views;      // copies of `params` this batch's graph was built on
    std::vector<at::Tensor> grads;      // this batch's gradients of `params`
  };
  TorchDmoeTrainerConfig config;
  at::Device device{at::kCPU};
  // stem w [width, 784], b; per layer gate w [dims·side, width], b; head w [10, width], b.
  std::vector<at::Tensor> params;
  std::vector<Adam> adam;
  std::map<std::uint64_t, Batch> batches;
  std::uint64_t steps = 0;

  std::size_t gate_index(std::uint32_t layer) const { return 2 + 2 * std::size_t{layer}; }
  std::size_t head_index() const { return 2 + 2 * std::size_t{config.layers}; }
  Batch& batch(std::uint64_t id) {
    const auto it = batches.find(id);
    if (it == batches.end()) throw std::out_of_range("dmoe trainer: batch " + std::to_string(id) + " is not in flight");
    return it->second;
  }
  // A copy of parameter i for batch b's graph: other batches' steps change `params` meanwhile.
  at::Tensor view(Batch& b, std::size_t i) {
    b.views[i] = params[i].detach().clone().set_requires_grad(true);
    return b.views[i];
  }
  void add_grads(Batch& b, std::size_t first, const std::vector<at::Tensor>& g, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) b.grads[first + i] = b.grads[first + i].defined() ? b.grads[first + i] + g[i] : g[i];
  }
};

TorchDmoeTrainerModel::TorchDmoeTrainerModel(TorchDmoeTrainerConfig config) : impl_(std::make_unique<Impl>()) {
  if (config.width == 0 || config.layers == 0 || config.dims == 0 || config.side == 0)
    throw std::invalid_argument("dmoe trainer: width, layers, dims and side must be >= 1");
  Impl& m = *impl_;
  m.config = config;
  m.device = pick_device(config.device, "dmoe trainer");
  const auto w = static_cast<std::int64_t>(config.width), g = static_cast<std::int64_t>(config.dims * config.side);
  std::uint64_t t = 0;
  auto add = [&](std::vector<std::int64_t> shape, std::int64_t fan_in) {
    m.params.push_back(uniform_init(mix64(config.seed ^ mix64(++t)), std::move(shape), fan_in, m.device));
  };
  add({w, 784}, 784);
  add({w}, 784);
  for (std::uint32_t l = 0; l < config.layers; ++l) {
    add({g, w}, w);
    add({g}, w);
  }
  add({10, w}, w);
  add({10}, w);
  m.adam.resize(m.params.size());
}
TorchDmoeTrainerModel::~TorchDmoeTrainerModel() = default;

std::uint64_t TorchDmoeTrainerModel::parameter_count() const {
  std::uint64_t n = 0;
  for (const auto& p : impl_->params) n += static_cast<std::uint64_t>(p.numel());
  return n;
}
std::size_t TorchDmoeTrainerModel::batches_kept() const { return impl_->batches.size(); }
std::uint64_t TorchDmoeTrainerModel::steps() const { return impl_->steps; }
void TorchDmoeTrainerModel::release(std::uint64_t id) { impl_->batches.erase(id); }

DmoeTensor TorchDmoeTrainerModel::begin(std::uint64_t id, const LabelledImages& set, std::span<const std::uint32_t> indices,
                                        bool train) {
  Impl& m = *impl_;
  if (m.batches.contains(id)) throw std::invalid_argument("dmoe trainer: batch " + std::to_string(id) + " is already in flight");
  if (indices.empty()) throw std::invalid_argument("dmoe trainer: a batch of no images");
  if (set.image_size() != 784) throw std::invalid_argument("dmoe trainer: images of another size than 28 x 28");
  std::vector<float> x(indices.size() * 784);
  std::vector<std::int64_t> y(indices.size());
  for (std::size_t r = 0; r < indices.size(); ++r) {
    if (indices[r] >= set.count) throw std::out_of_range("dmoe trainer: image " + std::to_string(indices[r]) + " is outside the set");
    const std::uint8_t* px = set.pixels.data() + std::size_t{indices[r]} * 784;
    for (std::size_t j = 0; j < 784; ++j) x[r * 784 + j] = normalised_pixel(px[j]);
    y[r] = set.labels[indices[r]];
  }
  Impl::Batch b;
  b.train = train;
  b.labels = at::from_blob(y.data(), {static_cast<std::int64_t>(y.size())}, at::kLong).to(m.device, at::kLong, false, true);
  const at::Tensor xs = at::from_blob(x.data(), {static_cast<std::int64_t>(indices.size()), 784}, at::kFloat).to(m.device, at::kFloat, false, true);
  b.h.resize(m.config.layers);
  b.scores.resize(m.config.layers);
  b.views.resize(m.params.size());
  b.grads.resize(m.params.size());
  at::Tensor h0;
  if (train) {
    h0 = at::relu(at::linear(xs, m.view(b, 0), m.view(b, 1)));
  } else {
    at::NoGradGuard no_grad;
    h0 = at::relu(at::linear(xs, m.params[0], m.params[1]));
  }
  b.h0 = h0;
  DmoeTensor out = from_torch(h0);
  m.batches.emplace(id, std::move(b));
  return out;
}

std::vector<std::vector<double>> TorchDmoeTrainerModel::gate(std::uint64_t id, std::uint32_t layer, const DmoeTensor& h) {
  Impl& m = *impl_;
  if (layer >= m.config.layers) throw std::out_of_range("dmoe trainer: no layer " + std::to_string(layer));
  Impl::Batch& b = m.batch(id);
  const std::size_t gi = m.gate_index(layer);
  at::Tensor hl = to_torch(h, m.device);
  at::Tensor scores;
  if (b.train) {
    hl.set_requires_grad(true);
    scores = at::linear(hl, m.view(b, gi), m.view(b, gi + 1)).mean(0);
    b.h[layer] = hl;
    b.scores[layer] = scores;
  } else {
    at::NoGradGuard no_grad;
    scores = at::linear(hl, m.params[gi], m.params[gi + 1]).mean(0);
  }
  const at::Tensor c = scores.detach().to(at::kCPU).contiguous();
  std::vector<std::vector<double>> out(m.config.dims, std::vector<double>(m.config.side));
  for (std::uint32_t i = 0; i < m.config.dims; ++i)
    for (std::uint32_t j = 0; j < m.config.side; ++j) out[i][j] = c.data_ptr<float>()[i * m.config.side + j];
  return out;
}

HeadResult TorchDmoeTrainerModel::head(std::uint64_t id, const DmoeTensor& h) {
  Impl& m = *impl_;
  Impl::Batch& b = m.batch(id);
  const std::size_t hi = m.head_index();
  HeadResult r;
  at::Tensor hl = to_torch(h, m.device);
  if (b.train) {
    hl.set_requires_grad(true);
    const at::Tensor w = m.view(b, hi), bias = m.view(b, hi + 1);
    const at::Tensor logits = at::linear(hl, w, bias);
    const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
    const auto g = torch::autograd::grad({loss}, {w, bias, hl});
    m.add_grads(b, hi, g, 2);
    r.loss = loss.item<double>();
    r.correct = static_cast<std::uint32_t>(logits.argmax(1).eq(b.labels).sum().item<std::int64_t>());
    r.grad = from_torch(g[2]);
  } else {
    at::NoGradGuard no_grad;
    const at::Tensor logits = at::linear(hl, m.params[hi], m.params[hi + 1]);
    r.loss = at::cross_entropy_loss(logits, b.labels).item<double>();
    r.correct = static_cast<std::uint32_t>(logits.argmax(1).eq(b.labels).sum().item<std::int64_t>());
  }
  return r;
}

DmoeTensor TorchDmoeTrainerModel::gate_backward(std::uint64_t id, std::uint32_t layer,
                                                const std::vector<std::vector<double>>& grad_scores) {
  Impl& m = *impl_;
  Impl::Batch& b = m.batch(id);
  if (!b.train || layer >= m.config.layers || !b.scores[layer].defined())
    throw std::logic_error("dmoe trainer: no gate pass of layer " + std::to_string(layer) + " to go back through");
  std::vector<float> g(std::size_t{m.config.dims} * m.config.side);
  if (grad_scores.size() != m.config.dims) throw std::invalid_argument("dmoe trainer: gate gradient of the wrong shape");
  for (std::uint32_t i = 0; i < m.config.dims; ++i) {
    if (grad_scores[i].size() != m.config.side) throw std::invalid_argument("dmoe trainer: gate gradient of the wrong shape");
    for (std::uint32_t j = 0; j < m.config.side; ++j) g[i * m.config.side + j] = static_cast<float>(grad_scores[i][j]);
  }
  const at::Tensor gs = at::from_blob(g.data(), {static_cast<std::int64_t>(g.size())}, at::kFloat).to(m.device, at::kFloat, false, true);
  const std::size_t gi = m.gate_index(layer);
  const auto grads = torch::autograd::grad({b.scores[layer]}, {b.views[gi], b.views[gi + 1], b.h[layer]}, {gs});
  m.add_grads(b, gi, grads, 2);
  b.scores[layer] = at::Tensor();
  b.h[layer] = at::Tensor();
  return from_torch(grads[2]);
}

void TorchDmoeTrainerModel::finish(std::uint64_t id, const DmoeTensor& grad_h0) {
  Impl& m = *impl_;
  Impl::Batch& b = m.batch(id);
  if (!b.train) throw std::logic_error("dmoe trainer: an evaluation batch has no backward pass");
  const auto g = torch::autograd::grad({b.h0}, {b.views[0], b.views[1]}, {to_torch(grad_h0, m.device)});
  m.add_grads(b, 0, g, 2);
  ++m.steps;
  for (std::size_t i = 0; i < m.params.size(); ++i)
    if (b.grads[i].defined()) m.adam[i].step(m.params[i], b.grads[i], m.steps, m.config.lr);
  m.batches.erase(id);
}

}  // namespace swarmlab::learn
