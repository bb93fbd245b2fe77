// `swarmlab dmoe-trainer`: one asynchronous trainer of a live Learning@home run
// (exec/dmoe/dmoe_process.h). The core's DmoeStack walks each batch through the layers (gate →
// beam search and mixture on the remote experts → residual add) and back, with libtorch as its
// trunk; between the two walks the head gives the loss, and afterwards the trainer takes one Adam
// step on its own parameters. The stack pauses for an exponential of the scenario's mean after
// every expert call of a training batch: the network delay.
#include <csignal>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/dht/node.h"
#include "core/dmoe/dmoe_layer.h"
#include "core/dmoe/dmoe_stack.h"
#include "core/dmoe/expert_client.h"
#include "core/service_mux.h"
#include "exec/dmoe/dmoe_process.h"
#include "exec/dmoe/dmoe_process_parts.h"
#include "learn/sample_stream.h"
#include "learn/torch/torch_dmoe.h"

namespace swarmlab::exec {
namespace {

using core::dmoe::Tensor;

Tensor plus(Tensor a, const Tensor& b) {
  for (std::size_t i = 0; i < a.values.size(); ++i) a.values[i] += b.values[i];
  return a;
}

// The trainer's own layers around each DMoE layer, in libtorch: its gates and the residual path
// h_{l+1} = h_l + mixture_l(h_l), whose backward adds the experts' input gradient and the gate's.
class TorchTrunk final : public core::dmoe::TrunkModel {
 public:
  explicit TorchTrunk(learn::TorchDmoeTrainerModel& model) : model_(model) {}
  std::vector<std::vector<double>> gate(std::uint64_t batch, std::uint32_t layer, const Tensor& h) override {
    return model_.gate(batch, layer, h);
  }
  Tensor output(std::uint64_t, std::uint32_t, Tensor h, const Tensor& mixture) override { return plus(std::move(h), mixture); }
  Tensor input_gradient(std::uint64_t batch, std::uint32_t layer, Tensor grad_output,
                        const core::dmoe::MixtureGradient& mixture) override {
    Tensor through_gate = model_.gate_backward(batch, layer, mixture.grad_gate);
    return plus(plus(std::move(grad_output), mixture.grad_input), through_gate);
  }

 private:
  learn::TorchDmoeTrainerModel& model_;
};

constexpr std::uint32_t kEvalRows = 250;       // rows of one evaluation batch
constexpr double kDrainAfterEnd_s = 15;        // in-flight batches get this long after the duration

class DmoeTrainerProcess {
 public:
  DmoeTrainerProcess(const DmoeProcessConfig& cfg, std::ostream& out, std::ostream& log)
      : cfg_(cfg), sc_(cfg.scenario), out_(out), host_(cfg.host, log), trainer_(cfg.host.id - sc_.runtimes) {
    train_ = std::make_shared<const learn::LabelledImages>(learn::load_fashion_mnist(learn::Split::Train, cfg.data_dir));
    if (evaluates()) test_ = std::make_shared<const learn::LabelledImages>(learn::load_fashion_mnist(learn::Split::Test, cfg.data_dir));
    learn::ShardStreamConfig s;
    s.dataset_size = train_->count;
    s.seed = sc_.seed;
    s.peer = trainer_;
    stream_ = std::make_unique<learn::ShardStream>(s);
  }

  int run() {
    core::Environment& env = host_.peer_env();
    learn::set_intra_op_threads(cfg_.threads);
    learn::TorchDmoeTrainerConfig mc;
    mc.width = sc_.width;
    mc.layers = sc_.layers;
    mc.dims = sc_.grid(0).dims;
    mc.side = sc_.grid(0).side;
    mc.lr = sc_.lr;
    mc.seed = sc_.seed;
    mc.device = torch_device(cfg_.device);
    model_ = std::make_unique<learn::TorchDmoeTrainerModel>(mc);
    mux_ = std::make_unique<core::ServiceMux>([&env] { return env.now(); });
    dht_ = std::make_unique<core::dht::DhtNode>(env, core::dht::NodeId::random(env.rng()));
    core::dmoe::ClientConfig cc;
    cc.forward_timeout_s = sc_.forward_timeout_s;
    cc.backward_timeout_s = sc_.backward_timeout_s;
    client_ = std::make_unique<core::dmoe::ExpertClient>(env, cc);
    mux_->add(core::ServiceId::Dht, *dht_);
    mux_->add(core::ServiceId::Experts, *client_);
    dht_->set_liveness([mux = mux_.get()](core::PeerId q) { return mux->last_heard(q); });
    std::vector<core::dmoe::DmoeLayer*> layers;
    for (std::uint32_t l = 0; l < sc_.layers; ++l) {
      layers_.push_back(std::make_unique<core::dmoe::DmoeLayer>(env, *dht_, *client_, sc_.grid(l), sc_.experts_per_call(),
                                                                sc_.width, sc_.width));
      layers.push_back(layers_.back().get());
    }
    trunk_ = std::make_unique<TorchTrunk>(*model_);
    stack_ = std::make_unique<core::dmoe::DmoeStack>(env, std::move(layers), *trunk_, sc_.delay_s);
    env.set_sink(mux_.get());
    write_start();
    std::signal(SIGTERM, request_dmoe_leave);
    host_.start([this](std::vector<core::PeerId> bootstrap) {
      std::vector<core::PeerId> runtimes;
      for (core::PeerId p : bootstrap)
        if (p < sc_.runtimes) runtimes.push_back(p);
      dht_->bootstrap(runtimes, [this](bool) {
        // The runtimes announce as they join: give them one announcement period.
        host_.loop().schedule(sc_.announce_period_s, [this] {
          started_s_ = host_.now();
          for (std::uint32_t i = 0; i < sc_.in_flight; ++i) start_batch();
          watch();
        });
      });
    });
    host_.run();
    write_exit();
    return batches_ > 0 ? 0 : 1;
  }

 private:
  struct Batch {  // a training batch
    std::uint64_t id = 0;
    std::uint32_t rows = 0;
    std::uint32_t experts_answered = 0;
  };

  bool evaluates() const { return trainer_ == 0 && sc_.eval_every > 0; }
  bool training_over() const { return leave_requested() || host_.now() - started_s_ >= sc_.duration_s; }

  void watch() {
    if (!ending_ && training_over()) {
      ending_ = true;
      ended_s_ = host_.now();
    }
    if (ending_ && !finishing_ && ((in_flight_ == 0 && !evaluating_) || host_.now() - ended_s_ > kDrainAfterEnd_s)) {
      finishing_ = true;
      if (evaluates()) {
        evaluate(test_->count, [this] { host_.finish(); });
      } else {
        host_.finish();
      }
    }
    host_.loop().schedule(0.1, [this] { watch(); });
  }

  void start_batch() {
    if (ending_) return;
    auto b = std::make_shared<Batch>();
    b->id = next_id_++;
    std::vector<std::uint32_t> indices;
    stream_->next(sc_.batch, indices);
    b->rows = sc_.batch;
    ++in_flight_;
    Tensor h = model_->begin(b->id, *train_, indices, true);
    stack_->forward(b->id, std::move(h), true, [this, b](core::dmoe::StackForward up) {
      if (up.dropped != core::dmoe::BatchDrop::None) return drop(b);
      b->experts_answered = up.experts_answered;
      const learn::HeadResult r = model_->head(b->id, up.output);
      loss_ = r.loss;
      correct_ = r.correct;
      stack_->backward(b->id, r.grad, [this, b](core::dmoe::StackBackward down) {
        if (down.dropped != core::dmoe::BatchDrop::None) return drop(b);
        model_->finish(b->id, down.grad_input);
        batch_done(b);
      });
    });
  }

  void batch_done(const std::shared_ptr<Batch>& b) {
    --in_flight_;
    ++batches_;
    host_.keep_alive();
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["trainer"] = trainer_;
    j["event"] = "batch";
    j["batch"] = batches_;
    j["time_s"] = host_.now();
    j["loss"] = loss_;
    j["accuracy"] = static_cast<double>(correct_) / b->rows;
    j["experts_answered"] = b->experts_answered;
    j["dropped"] = dropped_;
    out_ << j.dump() << std::endl;
    if (evaluates() && batches_ % sc_.eval_every == 0 && !evaluating_) evaluate(sc_.eval_samples, nullptr);
    start_batch();
  }

  void drop(const std::shared_ptr<Batch>& b) {
    model_->release(b->id);
    --in_flight_;
    ++dropped_;
    start_batch();
  }

  // Test accuracy on the first `samples` test images, forward only, in batches of kEvalRows.
  void evaluate(std::uint32_t samples, std::function<void()> then) {
    evaluating_ = true;
    auto sum = std::make_shared<Evaluation>();
    sum->samples = std::min(samples, test_->count);
    sum->then = std::move(then);
    sum->at_batch = batches_;
    evaluate_from(sum, 0);
  }

  struct Evaluation {
    std::uint32_t samples = 0, done = 0, correct = 0, dropped = 0;
    double loss_sum = 0;
    std::uint64_t at_batch = 0;
    std::function<void()> then;
  };

  void evaluate_from(std::shared_ptr<Evaluation> e, std::uint32_t first) {
    if (first >= e->samples) {
      nlohmann::ordered_json j;
      j["peer"] = cfg_.host.id;
      j["trainer"] = trainer_;
      j["event"] = "eval";
      j["batch"] = e->at_batch;
      j["time_s"] = host_.now();
      const std::uint32_t scored = e->done;
      j["test_accuracy"] = scored ? static_cast<double>(e->correct) / scored : 0.0;
      j["test_loss"] = scored ? e->loss_sum / scored : 0.0;
      j["test_samples"] = scored;
      j["test_dropped"] = e->dropped;
      out_ << j.dump() << std::endl;
      evaluating_ = false;
      if (e->then) e->then();
      return;
    }
    const std::uint32_t rows = std::min(kEvalRows, e->samples - first);
    std::vector<std::uint32_t> indices(rows);
    for (std::uint32_t i = 0; i < rows; ++i) indices[i] = first + i;
    const std::uint64_t id = next_id_++;
    Tensor h = model_->begin(id, *test_, indices, false);
    stack_->forward(id, std::move(h), false, [this, e, first, rows, id](core::dmoe::StackForward up) {
      if (up.dropped != core::dmoe::BatchDrop::None) {
        e->dropped += rows;
      } else {
        const learn::HeadResult r = model_->head(id, up.output);
        e->done += rows;
        e->correct += r.correct;
        e->loss_sum += r.loss * rows;
      }
      model_->release(id);
      host_.loop().schedule(0, [this, e, first, rows] { evaluate_from(e, first + rows); });
    });
  }

  void write_start() {
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["trainer"] = trainer_;
    j["event"] = "start";
    j["time_s"] = host_.now();
    j["parameters"] = model_->parameter_count();
    out_ << j.dump() << std::endl;
  }

  void write_exit() {
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["trainer"] = trainer_;
    j["event"] = "exit";
    j["time_s"] = host_.now();
    j["batches"] = batches_;
    j["dropped"] = dropped_;
    const core::dmoe::ClientStats& s = client_->stats();
    j["failed_calls"] = s.refused + s.timed_out + s.link_failed + s.bad_replies;
    j["requests"] = s.requests;
    j["answered"] = s.answered;
    j["refused"] = s.refused;
    j["timed_out"] = s.timed_out;
    j["link_failed"] = s.link_failed;
    j["bad_replies"] = s.bad_replies;
    host_.add_exit_counters(j);
    out_ << j.dump() << std::endl;
  }

  const DmoeProcessConfig& cfg_;
  const scenarios::DmoeLiveScenario& sc_;
  std::ostream& out_;
  LiveHost host_;
  std::uint32_t trainer_;
  std::shared_ptr<const learn::LabelledImages> train_, test_;
  std::unique_ptr<learn::SampleStream> stream_;
  std::unique_ptr<learn::TorchDmoeTrainerModel> model_;
  std::unique_ptr<core::ServiceMux> mux_;
  std::unique_ptr<core::dht::DhtNode> dht_;
  std::unique_ptr<core::dmoe::ExpertClient> client_;
  std::vector<std::unique_ptr<core::dmoe::DmoeLayer>> layers_;
  std::unique_ptr<TorchTrunk> trunk_;
  std::unique_ptr<core::dmoe::DmoeStack> stack_;
  std::uint64_t next_id_ = 1, batches_ = 0, dropped_ = 0;
  std::uint32_t in_flight_ = 0;
  double loss_ = 0;
  std::uint32_t correct_ = 0;
  double started_s_ = 0, ended_s_ = 0;
  bool ending_ = false, finishing_ = false, evaluating_ = false;
};

}  // namespace

int run_dmoe_trainer(const DmoeProcessConfig& config, std::ostream& out, std::ostream& log) {
  const auto& sc = config.scenario;
  if (config.host.id < sc.runtimes || config.host.id >= sc.peers())
    throw std::invalid_argument("peer " + std::to_string(config.host.id) + " is not a trainer (peers " +
                                std::to_string(sc.runtimes) + "-" + std::to_string(sc.peers() - 1) + " are)");
  DmoeTrainerProcess p(config, out, log);
  return p.run();
}

}  // namespace swarmlab::exec
