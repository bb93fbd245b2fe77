#include "exec/train/training_peer.h"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "exec/paced_learner.h"
#include "exec/parameters_hash.h"
#include "learn/fashion_mnist.h"
#include "learn/sample_stream.h"

namespace swarmlab::exec {
namespace {

using core::training::CollaborativePeer;

// SIGTERM asks the peer to leave after its next step; queued with a value S (sigqueue, how the
// launcher ends runs), to leave once it holds the state of global step S. Peers asked at the same
// moment may be either side of a step: a common S is what makes them leave holding the same state.
volatile std::sig_atomic_t g_leave_requested = 0;
volatile std::sig_atomic_t g_leave_at_step = 0;  // 0: after the next step
extern "C" void request_leave(int, siginfo_t* info, void*) {
  if (info && info->si_code == SI_QUEUE && info->si_value.sival_int > 0) g_leave_at_step = info->si_value.sival_int;
  g_leave_requested = 1;
}
constexpr double kLeaveCheckPeriod = 0.1;
constexpr double kLeaveWithoutStepAfter = 15;  // no step comes (alone, or loading state): leave anyway
constexpr double kBooksPeriod = 1;  // a SIGKILLed incarnation's books end at its last books line
// Asked to leave (the end of a churn run), a peer stays this long after its last step, training and
// joining no group but serving its state: a peer that missed the last step (it was restarted, or
// fell behind under load) can still download it instead of being left holding an older state.
constexpr double kLingerAfterAskedToLeave = 5;

std::unique_ptr<learn::SampleStream> make_stream(const TrainingPeerConfig& c, std::uint32_t dataset_size) {
  if (c.order == SampleOrder::Fixed)
    return std::make_unique<learn::FixedOrderStream>(c.data_seed, dataset_size, c.host.id);
  learn::ShardStreamConfig s;
  s.dataset_size = dataset_size;
  s.shard_size = c.shard_size;
  s.buffer_size = c.shuffle_buffer;
  s.seed = c.data_seed;
  s.peer = c.host.id;
  return std::make_unique<learn::ShardStream>(s);
}

// The first `n` images of a set (all when n is 0 or larger).
std::shared_ptr<const learn::LabelledImages> first_images(const learn::LabelledImages& set, std::uint32_t n) {
  auto out = std::make_shared<learn::LabelledImages>(set);
  if (n > 0 && n < set.count) {
    out->count = n;
    out->pixels.resize(std::size_t{n} * set.image_size());
    out->labels.resize(n);
  }
  return out;
}

class TrainingPeerProcess {
 public:
  TrainingPeerProcess(const TrainingPeerConfig& cfg, std::ostream& out, std::ostream& log)
      : cfg_(cfg), out_(out), host_(cfg.host, log) {
    train_ = std::make_shared<const learn::LabelledImages>(learn::load_fashion_mnist(learn::Split::Train, cfg.data_dir));
    if (cfg.evaluate_every > 0) {
      test_ = std::make_shared<const learn::LabelledImages>(learn::load_fashion_mnist(learn::Split::Test, cfg.data_dir));
      eval_set_ = first_images(*test_, cfg.eval_samples);
    }
  }

  int run() {
    EventLoop& loop = host_.loop();
    auto torch = std::make_unique<learn::TorchLearner>(
        cfg_.learner, train_, make_stream(cfg_, train_->count),
        [&loop](std::function<void()> fn) { loop.post(std::move(fn)); });
    torch_ = torch.get();
    core::training::PeerParts parts;
    auto coordinator = std::make_unique<core::training::DhtCoordinator>(host_.peer_env(), cfg_.coordination);
    coordinator_ = coordinator.get();
    parts.coordinator = std::move(coordinator);
    if (cfg_.compute_cap_sps > 0)
      parts.learner = std::make_unique<PacedLearner>(host_.peer_env(), std::move(torch), cfg_.compute_cap_sps);
    else
      parts.learner = std::move(torch);
    peer_ = std::make_unique<CollaborativePeer>(host_.peer_env(), cfg_.peer, std::move(parts), events());
    nlohmann::ordered_json start;
    start["peer"] = cfg_.host.id;
    start["event"] = "start";
    start["step"] = 0;
    start["time_s"] = host_.now();
    start["parameters"] = peer_->learner().parameter_count();
    out_ << start.dump() << std::endl;
    struct sigaction on_term {};
    on_term.sa_sigaction = request_leave;
    on_term.sa_flags = SA_SIGINFO;
    sigemptyset(&on_term.sa_mask);
    sigaction(SIGTERM, &on_term, nullptr);
    watch_for_leave_request();
    write_books_line();
    host_.start(*peer_);
    announced_sps_ = cfg_.peer.capacity.compute_sps;
    announce_measured_speed();
    const bool abandoned = host_.run();
    write_exit_line(abandoned);
    return abandoned ? 1 : 0;
  }

 private:
  core::training::CollaborativePeerEvents events() {
    core::training::CollaborativePeerEvents e;
    e.computed = [this](std::uint64_t n) { computed_ += n; };
    e.discarded = [this](std::uint64_t n) { discarded_ += n; };
    // Taken as the round begins, the loss covers exactly the micro-batches this step hands over.
    e.round_started = [this](const core::averaging::RoundPlan& plan, std::uint64_t) {
      participants_ = plan.size();
      // The share of the vector this peer reduces: which of the planner's optimal splits ran.
      const auto me = plan.index_of(cfg_.host.id);
      reduces_ = me ? plan.span_share(*me) : 0;
      handed_loss_ = peer_->learner().take_loss();
    };
    e.round_finished = [this](const core::averaging::RoundOutcome& o, std::uint64_t contributed, std::uint64_t step) {
      contributed_ += contributed;
      // The protocol recovers from a round that failed (the peer reloads the state the others
      // settled on); counted, not fatal.
      if (!o.completed || o.fraction_averaged < 1) ++rounds_incomplete_;
      write_step_line(o, contributed, step);
    };
    e.sync_finished = [this](bool ok, std::uint64_t step, bool updates) {
      nlohmann::ordered_json j;
      j["peer"] = cfg_.host.id;
      j["event"] = "sync";
      j["ok"] = ok;
      j["updates"] = updates;  // the steps it missed, not the whole state
      j["step"] = step;
      j["time_s"] = host_.now();
      if (!ok) {
        out_ << j.dump() << std::endl;
        return;
      }
      // Asked to leave at a step it has just loaded (it missed that step's round).
      if (leave_requested_ && leave_at_step_ > 0 && step >= leave_at_step_) host_.loop().schedule(0, [this] { leave(); });
      host_.hold();
      torch_->parameters_async([this, j](std::vector<float> params) mutable {
        j["lineage"] = hex64(peer_->lineage());
        j["params_hash"] = parameters_hash(params);
        out_ << j.dump() << std::endl;
        host_.release();
      });
    };
    e.stepped = [this](std::uint64_t step) {
      host_.keep_alive();
      if (step >= cfg_.steps || (leave_requested_ && step >= leave_at_step_)) leave();
    };
    return e;
  }

  void write_step_line(const core::averaging::RoundOutcome& o, std::uint64_t contributed, std::uint64_t step) {
    auto j = std::make_shared<nlohmann::ordered_json>();
    const auto& s = host_.env().transport().stats();
    (*j)["peer"] = cfg_.host.id;
    (*j)["step"] = step;
    (*j)["time_s"] = host_.now();
    (*j)["round_s"] = o.finished - o.started;
    (*j)["completed"] = o.completed;
    (*j)["clipped"] = o.clipped_contributions;  // as a reducer with CenteredClip (docs/trust.md §3)
    (*j)["participants"] = participants_;
    (*j)["reduces"] = reduces_;
    (*j)["contributed"] = contributed;
    (*j)["loss"] = handed_loss_ ? nlohmann::ordered_json(*handed_loss_) : nlohmann::ordered_json(nullptr);
    (*j)["lineage"] = hex64(peer_->lineage());
    (*j)["params_hash"] = nullptr;  // filled in below, keeping the field order
    auto& handover = (*j)["handover"] = nlohmann::ordered_json::array();
    for (const learn::MicroBatchRecord& r : torch_->handover()) handover.push_back({r.first, r.count, r.version});
    (*j)["samples_computed"] = computed_;
    (*j)["samples_contributed"] = contributed_;
    (*j)["samples_discarded"] = discarded_;
    (*j)["compute_s"] = peer_->compute_time();
    (*j)["samples_per_s"] = announced_sps_;
    (*j)["bytes_sent"] = s.bytes_sent;
    (*j)["bytes_received"] = s.bytes_received;
    if (cfg_.checkpoint_every > 0 && step % cfg_.checkpoint_every == 0) checkpoint(step);
    // The parameters after the step (and the evaluation) are read behind the learner's queued work,
    // so the loop never waits for a micro-batch in flight; the line is written when they arrive.
    const bool evaluate = cfg_.evaluate_every > 0 && step % cfg_.evaluate_every == 0;
    auto pending = std::make_shared<int>(evaluate ? 2 : 1);
    auto write_when_complete = [this, j, pending] {
      if (--*pending == 0) {
        out_ << j->dump() << std::endl;
        host_.release();
      }
    };
    host_.hold();
    torch_->parameters_async([this, j, step, write_when_complete](std::vector<float> params) {
      (*j)["params_hash"] = parameters_hash(params);
      if (!cfg_.dump_dir.empty()) dump(params, step);
      write_when_complete();
    });
    if (evaluate)
      torch_->evaluate_async(eval_set_, [j, write_when_complete](learn::Evaluation e) {
        (*j)["test_accuracy"] = e.accuracy;
        (*j)["test_loss"] = e.loss;
        (*j)["test_samples"] = e.samples;
        write_when_complete();
      });
  }

  void dump(const std::vector<float>& params, std::uint64_t step) {
    std::filesystem::create_directories(cfg_.dump_dir);
    const std::string path = cfg_.dump_dir + "/peer-" + std::to_string(cfg_.host.id) + "-step-" + std::to_string(step) + ".f32";
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(params.data()), static_cast<std::streamsize>(params.size() * sizeof(float)));
    if (!f) host_.log("cannot write " + path);
  }

  void checkpoint(std::uint64_t step) {
    std::filesystem::create_directories(cfg_.checkpoint_dir);
    const std::string path = cfg_.checkpoint_dir + "/step-" + std::to_string(step) + ".swls";
    const std::string partial = path + ".partial";
    const std::vector<std::uint8_t> state = peer_->learner().export_state();
    {
      std::ofstream f(partial, std::ios::binary);
      f.write(reinterpret_cast<const char*>(state.data()), static_cast<std::streamsize>(state.size()));
      if (!f) return host_.log("cannot write " + partial);
    }
    std::filesystem::rename(partial, path);  // a reader never sees half a checkpoint
  }

  void leave() {
    if (left_) return;
    left_ = true;
    peer_->leave();
    if (leave_requested_) {
      host_.loop().schedule(kLingerAfterAskedToLeave, [this] { host_.finish(); });
    } else {
      host_.finish();
    }
  }

  void write_books_line() {
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["event"] = "books";
    j["step"] = peer_->step();
    j["time_s"] = host_.now();
    j["samples_computed"] = computed_;
    j["samples_contributed"] = contributed_;
    j["samples_discarded"] = discarded_;
    out_ << j.dump() << std::endl;
    host_.loop().schedule(kBooksPeriod, [this] { write_books_line(); });
  }

  void watch_for_leave_request() {
    host_.loop().schedule(kLeaveCheckPeriod, [this] {
      if (g_leave_requested && !leave_requested_) {
        leave_requested_ = true;
        leave_at_step_ = static_cast<std::uint64_t>(g_leave_at_step);
        if (leave_at_step_ > 0 && peer_->step() >= leave_at_step_) {
          host_.log("asked to leave at step " + std::to_string(leave_at_step_) + ": holding it already, leaving");
          leave();
          return;
        }
        host_.log(leave_at_step_ > 0 ? "asked to leave at step " + std::to_string(leave_at_step_)
                                     : std::string("asked to leave: leaving after the next step"));
        host_.loop().schedule(kLeaveWithoutStepAfter, [this] { leave(); });
      }
      watch_for_leave_request();
    });
  }

  // DeDLOC's peers report the speed they measure: samples per second of compute-device time.
  void announce_measured_speed() {
    const double busy = peer_->compute_time();
    if (busy - last_busy_ > 0.5 && computed_ > last_computed_) {
      announced_sps_ = static_cast<double>(computed_ - last_computed_) / (busy - last_busy_);
      auto capacity = cfg_.peer.capacity;
      capacity.compute_sps = announced_sps_;
      peer_->set_capacity(capacity);
      last_busy_ = busy;
      last_computed_ = computed_;
    }
    host_.loop().schedule(cfg_.announce_every_s, [this] { announce_measured_speed(); });
  }

  void write_exit_line(bool abandoned) {
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["event"] = "exit";
    j["ok"] = !abandoned;
    j["step"] = peer_ ? peer_->step() : 0;
    j["lineage"] = hex64(peer_ ? peer_->lineage() : 0);
    j["rounds_incomplete"] = rounds_incomplete_;
    j["samples_computed"] = computed_;
    j["samples_contributed"] = contributed_;
    j["samples_discarded"] = discarded_;
    j["samples_accumulated"] = peer_ ? peer_->accumulated() : 0;
    // Handed to a round that had not finished when the process left: gone with it.
    j["samples_in_round"] = peer_ && peer_->in_round() ? peer_->contributed() : 0;
    j["rejected_states"] = peer_ ? peer_->rejected_states() : 0;
    // State and update requests this peer refused as over a peer's budget, and peers it banned
    // (core/peer_limits.h).
    j["refused_requests"] = peer_ ? peer_->limits().refused_requests() : 0;
    j["bans"] = peer_ ? peer_->limits().bans() : 0;
    // DHT stores this peer refused because their sender held its share of its store already
    // (core/dht/publisher_ledger.h).
    j["refused_stores"] = coordinator_ ? coordinator_->dht().storage().refused_over_publisher_limit() : 0;
    if (torch_) {
      j["params_hash"] = parameters_hash(torch_->parameters());
      if (test_) {
        const learn::Evaluation e = torch_->evaluate(*test_);
        j["test_accuracy"] = e.accuracy;
        j["test_loss"] = e.loss;
        j["test_samples"] = e.samples;
      }
    }
    host_.add_exit_counters(j);
    out_ << j.dump() << std::endl;
  }

  const TrainingPeerConfig& cfg_;
  std::ostream& out_;
  LiveHost host_;
  std::shared_ptr<const learn::LabelledImages> train_, test_, eval_set_;
  learn::TorchLearner* torch_ = nullptr;
  const core::training::DhtCoordinator* coordinator_ = nullptr;  // owned by peer_
  std::unique_ptr<CollaborativePeer> peer_;
  std::size_t participants_ = 0;
  double reduces_ = 0;  // share of the vector this peer reduced in its last round
  std::optional<double> handed_loss_;
  std::uint64_t computed_ = 0, contributed_ = 0, discarded_ = 0, rounds_incomplete_ = 0;
  bool leave_requested_ = false;
  std::uint64_t leave_at_step_ = 0;  // 0: any step
  bool left_ = false;
  double announced_sps_ = 0, last_busy_ = 0;
  std::uint64_t last_computed_ = 0;
};

}  // namespace

int run_training_peer(const TrainingPeerConfig& config, std::ostream& out, std::ostream& log) {
  if (config.host.id >= config.host.addresses.size())
    throw std::invalid_argument("peer " + std::to_string(config.host.id) + " is not in the peer list");
  if (config.steps == 0) throw std::invalid_argument("steps must be >= 1");
  TrainingPeerProcess peer(config, out, log);
  return peer.run();
}

}  // namespace swarmlab::exec
