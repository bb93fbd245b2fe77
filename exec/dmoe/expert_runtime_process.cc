// `swarmlab dmoe-runtime`: one expert runtime of a live Learning@home run (exec/dmoe/dmoe_process.h).
#include <csignal>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/dht/node.h"
#include "core/dmoe/expert_announcer.h"
#include "core/dmoe/expert_keeper.h"
#include "core/dmoe/expert_runtime.h"
#include "core/service_mux.h"
#include "exec/dmoe/dmoe_process.h"
#include "exec/dmoe/dmoe_process_parts.h"
#include "learn/torch/torch_dmoe.h"

namespace swarmlab::exec {
namespace {

class ExpertRuntimeProcess {
 public:
  ExpertRuntimeProcess(const DmoeProcessConfig& cfg, std::ostream& out, std::ostream& log)
      : cfg_(cfg), sc_(cfg.scenario), out_(out), host_(cfg.host, log) {}

  int run() {
    core::Environment& env = host_.peer_env();
    EventLoop& loop = host_.loop();
    learn::TorchExpertConfig e;
    e.width = sc_.width;
    e.hidden = sc_.expert_hidden();
    e.lr = sc_.expert_lr;
    e.seed = sc_.seed;
    e.device = torch_device(cfg_.device);
    learn::set_intra_op_threads(cfg_.threads);
    mux_ = std::make_unique<core::ServiceMux>([&env] { return env.now(); });
    dht_ = std::make_unique<core::dht::DhtNode>(env, core::dht::NodeId::random(env.rng()));
    mux_->add(core::ServiceId::Dht, *dht_);
    dht_->set_liveness([mux = mux_.get()](core::PeerId q) { return mux->last_heard(q); });
    const core::PeerId self = cfg_.host.id;
    const core::dmoe::ExpertGrid grid = sc_.grid(sc_.layer_of(self));
    backend_ = std::make_unique<learn::TorchExpertBackend>(e, [&loop](std::function<void()> fn) { loop.post(std::move(fn)); });
    runtime_ = std::make_unique<core::dmoe::ExpertRuntime>(env, grid, *backend_);
    core::dmoe::AnnounceConfig ac;
    ac.alive_for_s = sc_.alive_for_s;
    ac.period_s = sc_.announce_period_s;
    announcer_ = std::make_unique<core::dmoe::ExpertAnnouncer>(env, *dht_, grid, ac);
    core::dmoe::KeeperConfig kc;
    kc.checkpoint_period_s = sc_.checkpoint_period_s;
    kc.watch_period_s = sc_.watch_period_s;
    kc.lapsed_checks = sc_.lapsed_checks;
    kc.checkpoint_ttl_s = std::max(60.0, 20 * sc_.checkpoint_period_s);
    keeper_ = std::make_unique<core::dmoe::ExpertKeeper>(env, *dht_, *runtime_, *announcer_, kc);
    for (const auto& uid : sc_.hosted_by(self)) runtime_->host(uid);
    const std::uint32_t watched = sc_.watched_by(self);
    if (watched != self) watched_ = sc_.hosted_by(watched);
    mux_->add(core::ServiceId::Experts, *runtime_);
    env.set_sink(mux_.get());
    write_line("start");
    std::signal(SIGTERM, request_dmoe_leave);
    watch();
    host_.start([this](std::vector<core::PeerId> bootstrap) {
      // Trainers bootstrap from the runtimes; the runtimes from each other.
      std::vector<core::PeerId> initial;
      for (core::PeerId p : bootstrap)
        if (p < sc_.runtimes) initial.push_back(p);
      dht_->bootstrap(initial, [this](bool) {
        announcer_->start([rt = runtime_.get()] { return std::vector<core::dmoe::ExpertUid>(rt->experts().begin(), rt->experts().end()); });
        keeper_->start(watched_);
        write_line("joined");
      });
    });
    host_.run();
    write_line("exit");
    return 0;
  }

 private:
  void watch() {
    host_.keep_alive();  // serving is progress: a runtime never gives up on its own
    if (leave_requested() && !host_.finishing()) {
      announcer_->stop();
      host_.finish();
      return;
    }
    if (host_.now() >= next_stats_) {
      write_line("stats");
      next_stats_ = host_.now() + 1;
    }
    host_.loop().schedule(0.1, [this] { watch(); });
  }

  void write_line(const char* event) {
    nlohmann::ordered_json j;
    j["peer"] = cfg_.host.id;
    j["event"] = event;
    j["time_s"] = host_.now();
    j["layer"] = sc_.layer_of(cfg_.host.id);
    const core::dmoe::RuntimeStats& s = runtime_->stats();
    std::uint64_t updates = 0;
    for (const auto& uid : runtime_->experts()) updates += backend_->updates(uid);
    j["experts"] = runtime_->experts().size();
    j["forward_requests"] = s.forward_requests;
    j["backward_requests"] = s.backward_requests;
    j["batches"] = s.batches;
    j["replies"] = s.replies;
    j["refused"] = s.refused;
    j["dropped_malformed"] = s.dropped_malformed;
    j["expert_updates"] = updates;
    const core::dmoe::KeeperStats& k = keeper_->stats();
    j["checkpoints_stored"] = k.checkpoints_stored;
    j["checkpoints_too_large"] = k.checkpoints_too_large;
    j["taken_over"] = k.taken_over;
    j["restarted_fresh"] = k.restarted_fresh;
    if (std::string(event) == "exit") host_.add_exit_counters(j);
    out_ << j.dump() << std::endl;
  }

  const DmoeProcessConfig& cfg_;
  const scenarios::DmoeLiveScenario& sc_;
  std::ostream& out_;
  LiveHost host_;
  std::unique_ptr<core::ServiceMux> mux_;
  std::unique_ptr<core::dht::DhtNode> dht_;
  std::unique_ptr<learn::TorchExpertBackend> backend_;
  std::unique_ptr<core::dmoe::ExpertRuntime> runtime_;
  std::unique_ptr<core::dmoe::ExpertAnnouncer> announcer_;
  std::unique_ptr<core::dmoe::ExpertKeeper> keeper_;  // destroyed first (members go bottom-up)
  std::vector<core::dmoe::ExpertUid> watched_;
  double next_stats_ = 0;
};

}  // namespace

int run_expert_runtime(const DmoeProcessConfig& config, std::ostream& out, std::ostream& log) {
  if (config.host.id >= config.scenario.runtimes)
    throw std::invalid_argument("peer " + std::to_string(config.host.id) + " is not an expert runtime (peers 0-" +
                                std::to_string(config.scenario.runtimes - 1) + " are)");
  ExpertRuntimeProcess p(config, out, log);
  return p.run();
}

}  // namespace swarmlab::exec
