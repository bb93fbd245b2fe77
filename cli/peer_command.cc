// swarmlab peer: one real peer process of a live run, averaging or training (usually started by `launch`).
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/peer_addresses.h"
#include "core/input_error.h"
#include "exec/auth_files.h"
#include "exec/live_scenario.h"
#include "exec/peer_process.h"
#include "exec/train/training_peer.h"
#include "scenarios/nat_traversal.h"
#include "learn/torch/torch_learner.h"
#include "scenarios/scenario_loader.h"
#include "sim/scenario/peer_setup.h"

namespace swarmlab::cli {
namespace {

struct PeerArgs {
  std::string scenario;
  std::uint32_t id = 0;
  std::string peers;
  std::string listen;
  std::string punch;  // ID=IP:PORT,... for the peers behind cone NATs (hole punching)
  std::string strategy = "ours";
  std::uint64_t rounds = 3;
  std::uint64_t parameters = 0;
  std::string codec;
  double scale = 1;
  double goodput = exec::kLiveGoodputFraction;
  double compute = -1, upload = -1, download = -1;
  bool client = false;
  bool discover = false;
  std::uint64_t run_id = 0;
  double clock_origin = -1;
  double connect_timeout = 5, idle_timeout = 300;
  double sender_timeout = 30, round_timeout = 0;
  bool no_pacing = false;
  double pace_all = 0;
  std::string die_at;
  bool die_silently = false;
  std::uint64_t check_stride = 0;
  std::string trace;
  std::string congestion;
  std::string auth_key, auth_token, auth_peer_keys;
  // --train
  bool train = false;
  std::string model = "cnn";
  std::uint64_t steps = 100;
  std::string data = learn::kFashionMnistDir;
  std::string order = "shards";
  std::uint32_t shuffle_buffer = 10000;
  std::uint64_t micro_batch = 0, target_batch = 0;
  double lr = 0.05, momentum = 0.9;
  std::string dpu;  // "", "on", "off"
  double compute_cap = -1;
  std::uint64_t evaluate_every = 0;
  std::uint32_t eval_samples = 0;
  std::string dump_parameters, checkpoint_dir;
  std::uint64_t checkpoint_every = 0;
  std::int64_t kept_updates = -1;  // < 0: the core's default
  int threads = 1;
  std::string device = "auto";
};

exec::LiveHostConfig host_config(const PeerArgs& a, const scenarios::Scenario& sc, std::uint64_t seed) {
  exec::LiveHostConfig h;
  h.id = a.id;
  h.addresses = parse_peers(a.peers, sc.peers.size());
  h.discover = a.discover;
  if (!a.listen.empty()) h.listen = exec::SocketAddress::parse(a.listen);
  h.seed = seed;
  h.connect_timeout_s = a.connect_timeout;
  h.idle_timeout_s = a.idle_timeout;
  h.clock_origin = a.clock_origin;
  h.network = exec::network_id(sc, a.run_id);
  h.pacing = !a.no_pacing;
  h.pace_all_bps = a.pace_all;
  h.trace_path = a.trace;
  h.congestion_control = a.congestion;
  if (!a.punch.empty()) h.punch = parse_peers(a.punch, sc.peers.size(), "--punch");
  exec::check_live_nat_traversal(sc, !h.punch.empty());
  if (sc.nat_traversal) h.reachability = std::make_shared<const core::relay::Reachability>(scenarios::reachability_config(sc));
  if (!a.auth_key.empty() || !a.auth_token.empty() || !a.auth_peer_keys.empty()) {
    if (a.auth_key.empty() || a.auth_token.empty() || a.auth_peer_keys.empty())
      throw std::invalid_argument("--auth-key, --auth-token and --auth-peer-keys go together (docs/trust.md)");
    exec::LiveAuthConfig auth;
    auth.key = exec::load_key_file(a.auth_key);
    const exec::IssuedToken issued = exec::load_token_file(a.auth_token);
    if (issued.token.peer_key != auth.key.public_key)
      throw core::InputError(a.auth_token, "peer_public_key", "is not the public key of " + a.auth_key + " (--auth-key)");
    auth.token = issued.token;
    auth.authority = issued.authority;
    auth.token_path = a.auth_token;  // a newer token renamed over it is taken up (exec/token_refresher.h)
    auth.peer_keys = exec::load_peer_keys(a.auth_peer_keys);
    if (auth.peer_keys.size() != sc.peers.size())
      throw core::InputError(a.auth_peer_keys, "public_keys",
                             "expected one entry per scenario peer (" + std::to_string(sc.peers.size()) + ")");
    if (auth.peer_keys[a.id] != auth.key.public_key)
      throw core::InputError(a.auth_peer_keys, "public_keys[" + std::to_string(a.id) + "]", "is not this peer's public key");
    h.auth = std::move(auth);
  }
  return h;
}

// What the peer announces: the live view's capacity unless overridden.
void announce(const PeerArgs& a, const scenarios::Scenario& live, const exec::LiveHostConfig& host,
              core::training::CollaborativePeerConfig& peer) {
  peer.capacity = exec::live_capacity(live, a.id, a.goodput);
  if (a.compute >= 0) peer.capacity.compute_sps = a.compute;
  if (a.upload >= 0) peer.capacity.upload_bps = a.upload;
  if (a.download >= 0) peer.capacity.download_bps = a.download;
  peer.capacity.client_mode = peer.capacity.client_mode || a.client || !host.addresses[a.id];
  peer.reachability = host.reachability;
}

// A training peer: the scenario's DeDLOC or DiLoCo peer on the libtorch learner.
int run_training(const PeerArgs& a, const scenarios::Scenario& sc, scenarios::Scenario live) {
  const learn::Model model = *core::parse_name(learn::kModelNames, a.model);
  if (a.target_batch) live.workload.target_batch = a.target_batch;
  if (a.micro_batch) live.training.micro_batch = a.micro_batch;
  if (a.dpu == "on") live.training.dpu = true;
  if (a.dpu == "off") live.training.dpu = false;
  exec::TrainingPeerConfig c;
  c.host = host_config(a, sc, live.seed);
  c.name = sc.peers[a.id].name;
  c.peer = sim::training_peer_config(live, a.id, sim::TransportAssumptions{a.goodput});
  announce(a, live, c.host, c.peer);
  c.coordination = sim::dht_coordinator_config(live, c.peer);
  c.learner.model = model;
  c.learner.mode = live.training.mode;
  c.learner.model_seed = live.seed;
  c.learner.lr = a.lr;
  c.learner.momentum = a.momentum;
  c.learner.threads = a.threads;
  c.learner.device = *core::parse_name(learn::kDeviceNames, a.device);
  c.data_dir = a.data;
  c.order = *core::parse_name(exec::kSampleOrderNames, a.order);
  c.shuffle_buffer = a.shuffle_buffer;
  c.data_seed = live.seed;
  c.steps = a.steps;
  // The scenario's compute speed is the device this peer emulates; 0 computes as fast as it can.
  c.compute_cap_sps = a.compute_cap >= 0 ? a.compute_cap : c.peer.capacity.compute_sps;
  c.evaluate_every = a.evaluate_every;
  c.eval_samples = a.eval_samples;
  c.dump_dir = a.dump_parameters;
  c.checkpoint_dir = a.checkpoint_dir;
  c.checkpoint_every = a.checkpoint_every;
  if (a.kept_updates >= 0) c.peer.kept_updates = static_cast<std::size_t>(a.kept_updates);
  if (c.checkpoint_every > 0 && c.checkpoint_dir.empty())
    throw std::invalid_argument("--checkpoint-every: needs --checkpoint-dir (where to write the states)");
  return exec::run_training_peer(c, std::cout, std::cerr);
}

const bool peer_registered = register_command(
    "peer", "Run one real peer of a live run (TCP): averaging rounds, or training with --train; normally started by `swarmlab launch`",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<PeerArgs>();
      sub.add_option("scenario", a->scenario, "scenario JSON file")->required();
      sub.add_option("--id", a->id, "this peer's index in the scenario")->required();
      sub.add_option("--peers", a->peers, "ID=IP:PORT,... for every peer that accepts connections (the transport's address book; coordination runs over the DHT)")->required();
      sub.add_flag("--discover", a->discover, "--peers lists only some peers (the bootstrap peers, with this one): learn where the others listen "
                                              "from them (exec/README.md, address discovery)");
      sub.add_option("--listen", a->listen, "bind here instead of this peer's --peers address");
      sub.add_option("--punch", a->punch, "ID=IP:PORT,... where the peers behind cone NATs punch from (their NAT's address, "
                                          "their punch port): NAT'd pairs of them connect by a hole punch (docs/trust.md; launch --nat gives it)");
      sub.add_option("--strategy", a->strategy, "ar, ps, ours or hd")->check(CLI::IsMember(core::names_of(core::averaging::kStrategyNames)))->capture_default_str();
      sub.add_option("--rounds", a->rounds, "averaging rounds")->check(Count(1, 1000000, "a number of rounds"))->capture_default_str();
      sub.add_option("--parameters", a->parameters, "vector length (default: the scenario's)");
      sub.add_option("--codec", a->codec, "wire precision (default: the scenario's)")->check(CLI::IsMember(core::names_of(core::codec::kCodecNames)));
      sub.add_option("--scale", a->scale, "scenario rates are multiplied by this")->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--goodput", a->goodput, "announced bandwidth = scaled link rate × this")->check(Real(0.01, 1, "a fraction of the link rate"))->capture_default_str();
      sub.add_option("--announce-compute", a->compute, "announced samples/s (default: the scenario's)");
      sub.add_option("--announce-upload", a->upload, "announced upload bits/s (default: scenario × scale × goodput)");
      sub.add_option("--announce-download", a->download, "announced download bits/s (default: scenario × scale × goodput)");
      sub.add_flag("--client", a->client, "announce client mode (also implied by a missing --peers entry)");
      sub.add_option("--run-id", a->run_id, "run identity shared by the peers of one launch");
      sub.add_option("--clock-origin", a->clock_origin, "CLOCK_MONOTONIC seconds of the run's t = 0 (default: now)");
      sub.add_option("--connect-timeout", a->connect_timeout, "TCP connect + handshake")->capture_default_str();
      sub.add_option("--idle-timeout", a->idle_timeout, "give up after this long without a round")->capture_default_str();
      sub.add_option("--sender-timeout", a->sender_timeout, "upper bound of the adaptive sender timeout (core/training/round_timeouts.h)")->check(Positive(3600, "a number of seconds"))->capture_default_str();
      sub.add_option("--round-timeout", a->round_timeout, "upper bound of the adaptive round timeout (0: none)")->check(Real(0, 3600, "a number of seconds"));
      sub.add_flag("--no-pacing", a->no_pacing, "ignore the plan's pacing (links that are not the scenario's)");
      sub.add_option("--pace-all", a->pace_all, "pace every connection at this many bits/s (testing)");
      sub.add_option("--die-at", a->die_at, "ROUND+SECONDS: SIGKILL itself that long into that round (fault injection)");
      sub.add_flag("--die-silently", a->die_silently, "--die-at stops the process (SIGSTOP) instead: its connections stay open (a silent departure)");
      sub.add_option("--check-stride", a->check_stride, "check every k-th element against the exact average (0: about 1M per round)");
      sub.add_option("--trace", a->trace, "append a JSON-lines timeline here");
      sub.add_option("--congestion", a->congestion, "TCP congestion control for every connection (default: the system's)");
      sub.add_option("--auth-key", a->auth_key, "this peer's key file (`swarmlab auth keygen`): allowlist authentication on (docs/trust.md)");
      sub.add_option("--auth-token", a->auth_token, "this peer's token file (`swarmlab auth issue`); a newer token renamed over it is taken up while the peer runs");
      sub.add_option("--auth-peer-keys", a->auth_peer_keys, "every peer's public key by id: {\"public_keys\": [...]}");
      sub.add_flag("--train", a->train, "train a model on Fashion-MNIST (libtorch) instead of averaging seeded vectors");
      sub.add_option("--model", a->model, "--train: the model")->check(CLI::IsMember(core::names_of(learn::kModelNames)))->capture_default_str();
      sub.add_option("--steps", a->steps, "--train: leave once the collaboration reached this global step")->check(Count(1, 10000000, "a number of steps"))->capture_default_str();
      sub.add_option("--data", a->data, "--train: the Fashion-MNIST directory (IDX files, gzip)")->capture_default_str();
      sub.add_option("--order", a->order, "--train: shards (own seeded shard order + shuffle buffer) or fixed (a shared permutation, for replays)")->check(CLI::IsMember(core::names_of(exec::kSampleOrderNames)))->capture_default_str();
      sub.add_option("--shuffle-buffer", a->shuffle_buffer, "--train: samples in the shuffle buffer")->check(Count(1, 1000000, "a number of samples"))->capture_default_str();
      sub.add_option("--target-batch", a->target_batch, "--train: samples per global step (default: the scenario's)")->check(Count(1, 100000000, "a number of samples"));
      sub.add_option("--micro-batch", a->micro_batch, "--train: samples per compute call (default: the scenario's)")->check(Count(1, 1000000, "a number of samples"));
      sub.add_option("--lr", a->lr, "--train: DeDLOC learning rate (SGD with momentum)")->check(Positive(100, "a learning rate"))->capture_default_str();
      sub.add_option("--momentum", a->momentum, "--train: DeDLOC momentum")->check(Real(0, 1, "a momentum in [0, 1]"))->capture_default_str();
      sub.add_option("--dpu", a->dpu, "--train: delayed parameter updates on or off (default: the scenario's)")->check(CLI::IsMember({"on", "off"}));
      sub.add_option("--compute-cap", a->compute_cap, "--train: compute no faster than this many samples/s (default: the scenario's compute_sps; 0: no cap)")->check(Real(0, 1e9, "samples per second"));
      sub.add_option("--evaluate-every", a->evaluate_every, "--train: test-set accuracy every this many steps, and on the whole test set when leaving (0: never)")->check(Count(0, 10000000, "a number of steps"));
      sub.add_option("--eval-samples", a->eval_samples, "--train: test images per evaluation (0: all)")->check(Count(0, 1000000, "a number of images"));
      sub.add_option("--dump-parameters", a->dump_parameters, "--train: write the parameters after every step into this directory");
      sub.add_option("--checkpoint-dir", a->checkpoint_dir, "--train: write the state here every --checkpoint-every steps");
      sub.add_option("--checkpoint-every", a->checkpoint_every, "--train: steps between checkpoints")->check(Count(0, 10000000, "a number of steps"));
      sub.add_option("--kept-updates", a->kept_updates, "--train: steps whose averaged vector this peer keeps to send to peers holding an older state (default 4; docs/interpretations.md §26)")->check(Count(0, 1000000, "a number of steps"));
      sub.add_option("--threads", a->threads, "--train: libtorch intra-op threads")->check(CLI::Range(1, 256))->capture_default_str();
      sub.add_option("--device", a->device, "--train: auto (CUDA when there is one), cpu or cuda")->check(CLI::IsMember(core::names_of(learn::kDeviceNames)))->capture_default_str();
      return [a] {
        const scenarios::Scenario sc = scenarios::load_scenario(a->scenario);
        if (a->id >= sc.peers.size())
          throw std::invalid_argument("--id " + std::to_string(a->id) + ": the scenario has " + std::to_string(sc.peers.size()) + " peers");
        exec::LiveOverrides ov;
        ov.scale = a->scale;
        if (a->parameters) ov.parameters = a->parameters;
        if (!a->codec.empty()) ov.precision = core::codec::parse_codec(a->codec);
        scenarios::Scenario live = exec::live_view(sc, ov);
        live.averaging.strategy = *core::parse_name(core::averaging::kStrategyNames, a->strategy);
        live.averaging.sender_timeout_s = a->sender_timeout;
        if (a->round_timeout > 0) live.averaging.round_timeout_s = a->round_timeout;
        if (a->train) return run_training(*a, sc, live);

        exec::PeerConfig c;
        c.host = host_config(*a, sc, live.seed);
        c.name = sc.peers[a->id].name;
        c.peer = sim::averaging_peer_config(live, a->id, sim::TransportAssumptions{a->goodput});
        announce(*a, live, c.host, c.peer);
        c.host.compute_sps = c.peer.capacity.compute_sps;
        c.coordination = sim::dht_coordinator_config(live, c.peer);
        c.parameters = live.workload.parameters;
        c.rounds = a->rounds;
        c.check_stride = a->check_stride;
        if (!a->die_at.empty()) {
          const auto plus = a->die_at.find('+');
          try {
            if (plus == std::string::npos) throw std::invalid_argument("");
            c.die_round = std::stoull(a->die_at.substr(0, plus));
            c.die_after_s = std::stod(a->die_at.substr(plus + 1));
            c.die_silently = a->die_silently;
          } catch (const std::exception&) {
            throw std::invalid_argument("--die-at \"" + a->die_at + "\": expected ROUND+SECONDS, e.g. 1+0.5");
          }
        }
        return exec::run_peer(c, std::cout, std::cerr);
      };
    });

}  // namespace
}  // namespace swarmlab::cli
