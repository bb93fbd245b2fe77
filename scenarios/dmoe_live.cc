#include "scenarios/dmoe_live.h"

#include "core/input_limits.h"
#include "scenarios/json_reader.h"
#include "traces/text.h"

namespace swarmlab::scenarios {

using namespace json_input;

core::dmoe::ExpertGrid DmoeLiveScenario::grid(std::uint32_t layer) const {
  core::dmoe::ExpertGrid g;
  g.layer = (dense ? "dense" : "ffn") + std::to_string(layer);
  g.dims = dense ? 1 : dims;
  g.side = dense ? 1 : side;
  return g;
}

std::vector<core::dmoe::ExpertUid> DmoeLiveScenario::hosted_by(std::uint32_t runtime) const {
  const core::dmoe::ExpertGrid g = grid(layer_of(runtime));
  const std::uint32_t of_layer = (runtimes - layer_of(runtime) + layers - 1) / layers;  // runtimes serving the layer
  const std::uint32_t rank = runtime / layers;
  std::vector<core::dmoe::ExpertUid> out;
  for (std::uint64_t i = 0; i < g.capacity(); ++i)
    if (i % of_layer == rank) out.push_back(g.uid_at(i));
  return out;
}

std::uint32_t DmoeLiveScenario::watched_by(std::uint32_t runtime) const {
  const std::uint32_t next = runtime + layers;
  return next < runtimes ? next : layer_of(runtime);
}

namespace {

// Limits that keep a live run on one machine and its experts' checkpoints within a DHT value
// (docs/learning-at-home.md §10).
constexpr std::uint64_t kMaxProcesses = 64;
constexpr std::uint64_t kMaxWidth = 1024;

double seconds(const Reader& L, const Fields& f, std::string_view key, double fallback, double min, double max) {
  const json* v = f.find(key);
  if (!v) return fallback;
  return check_range(L, f.path(key), get_non_negative(L, *v, f.path(key), "s"), min, max, "s", "keeps a live run bounded");
}

std::uint32_t count(const Reader& L, const Fields& f, std::string_view key, std::uint32_t fallback, std::uint64_t min,
                    std::uint64_t max, std::string_view what) {
  const json* v = f.find(key);
  return v ? static_cast<std::uint32_t>(get_uint(L, *v, f.path(key), min, max, what)) : fallback;
}

}  // namespace

DmoeLiveScenario load_dmoe_live(const std::string& json_text, const std::string& source) {
  const Reader L{source};
  const json root = parse_strict(json_text, source);
  const Fields top(L, root, "", "an object with a \"dmoe\" section", {"dmoe"});
  const Fields d(L, top.require("dmoe", "the live DMoE run (an object)"), "dmoe", "the live DMoE run (an object)",
                 {"name", "description", "seed", "runtimes", "trainers", "model", "training", "timeouts", "experts"});
  DmoeLiveScenario s;
  s.name = get_string(L, d.require("name", "a name (text)"), d.path("name"));
  if (s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != std::string::npos)
    L.fail(d.path("name"), "expected letters, digits, '-', '_' and '.' only (it names the output folder), got " + describe(d.require("name", "")));
  if (const json* v = d.find("description")) s.description = get_string(L, *v, d.path("description"), true);
  if (const json* v = d.find("seed")) s.seed = get_uint(L, *v, d.path("seed"), 0, ~0ull, "a seed");
  s.runtimes = count(L, d, "runtimes", s.runtimes, 1, kMaxProcesses, "expert runtime processes");
  s.trainers = count(L, d, "trainers", s.trainers, 1, kMaxProcesses, "trainer processes");
  if (const json* m = d.find("model")) {
    const Fields f(L, *m, d.path("model"), "the model (an object)", {"width", "hidden", "layers", "grid", "k", "dense"});
    s.width = count(L, f, "width", s.width, 1, kMaxWidth, "a width");
    s.hidden = count(L, f, "hidden", s.hidden, 1, kMaxWidth, "an expert's inner width");
    s.layers = count(L, f, "layers", s.layers, 1, 16, "DMoE layers");
    if (const json* g = f.find("grid")) {
      if (!g->is_array() || g->size() != 2)
        L.fail(f.path("grid"), "expected [dims, side], two integers, got " + describe(*g));
      s.dims = static_cast<std::uint32_t>(get_uint(L, (*g)[0], element(f.path("grid"), 0), 1, core::dmoe::kMaxGridDims, "grid dimensions"));
      s.side = static_cast<std::uint32_t>(get_uint(L, (*g)[1], element(f.path("grid"), 1), 1, 64, "a grid side"));
    }
    s.k = count(L, f, "k", s.k, 1, 64, "experts per batch and layer");
    if (const json* v = f.find("dense")) s.dense = get_bool(L, *v, f.path("dense"));
    std::uint64_t experts = 1;
    for (std::uint32_t i = 0; i < s.dims; ++i) experts *= s.side;
    if (experts > 4096) L.fail(f.path("grid"), "expected at most 4096 experts per layer, got " + std::to_string(experts));
    if (!s.dense && s.k > experts)
      L.fail(f.path("k"), "expected at most the grid's " + std::to_string(experts) + " experts, got " + std::to_string(s.k));
  }
  if (s.runtimes < s.layers)
    L.fail(d.path("runtimes"), "expected at least one runtime per layer (" + std::to_string(s.layers) + "), got " +
                                   std::to_string(s.runtimes));
  if (const json* t = d.find("training")) {
    const Fields f(L, *t, d.path("training"), "the training (an object)",
                   {"batch", "lr", "expert_lr", "duration_s", "delay_ms", "in_flight", "eval_every", "eval_samples"});
    s.batch = count(L, f, "batch", s.batch, 1, 4096, "images per batch");
    auto rate = [&](std::string_view key, double fallback) {
      const json* v = f.find(key);
      if (!v) return fallback;
      const double r = get_non_negative(L, *v, f.path(key), "(a learning rate)");
      if (!(r > 0) || r > 10) L.fail(f.path(key), "expected a learning rate in (0, 10], got " + describe(*v));
      return r;
    };
    s.lr = rate("lr", s.lr);
    s.expert_lr = rate("expert_lr", s.expert_lr);
    s.duration_s = seconds(L, f, "duration_s", s.duration_s, 1, 86400);
    if (const json* v = f.find("delay_ms"))
      s.delay_s = check_range(L, f.path("delay_ms"), get_non_negative(L, *v, f.path("delay_ms"), "ms"), 0, 60000, "ms",
                              "keeps a live run bounded") / 1000;
    s.in_flight = count(L, f, "in_flight", s.in_flight, 1, 64, "batches in flight");
    s.eval_every = count(L, f, "eval_every", s.eval_every, 0, 1000000, "batches between evaluations");
    s.eval_samples = count(L, f, "eval_samples", s.eval_samples, 1, 10000, "test images");
  }
  if (const json* t = d.find("timeouts")) {
    const Fields f(L, *t, d.path("timeouts"), "the expert calls' timeouts (an object)", {"forward_s", "backward_s"});
    s.forward_timeout_s = seconds(L, f, "forward_s", s.forward_timeout_s, 0.01, 3600);
    s.backward_timeout_s = seconds(L, f, "backward_s", s.backward_timeout_s, 0.01, 3600);
  }
  if (const json* e = d.find("experts")) {
    const Fields f(L, *e, d.path("experts"), "the experts' life cycle (an object)",
                   {"alive_for_s", "announce_period_s", "checkpoint_period_s", "watch_period_s", "lapsed_checks"});
    s.alive_for_s = seconds(L, f, "alive_for_s", s.alive_for_s, 0.1, 86400);
    s.announce_period_s = seconds(L, f, "announce_period_s", s.announce_period_s, 0.05, 86400);
    s.checkpoint_period_s = seconds(L, f, "checkpoint_period_s", s.checkpoint_period_s, 0.1, 86400);
    s.watch_period_s = seconds(L, f, "watch_period_s", s.watch_period_s, 0.05, 86400);
    s.lapsed_checks = count(L, f, "lapsed_checks", s.lapsed_checks, 1, 100, "checks in a row");
    if (!(s.announce_period_s < s.alive_for_s))
      L.fail(f.path("announce_period_s"), "expected less than alive_for_s (" + std::to_string(s.alive_for_s) +
                                              " s): a live runtime's prefixes would lapse between announcements");
  }
  return s;
}

DmoeLiveScenario load_dmoe_live_file(const std::string& path) {
  return load_dmoe_live(traces::read_text_file(path, core::limits::kMaxScenarioFileBytes), path);
}

std::string dmoe_live_json(const DmoeLiveScenario& s) {
  nlohmann::ordered_json d;
  d["name"] = s.name;
  d["description"] = s.description;
  d["seed"] = s.seed;
  d["runtimes"] = s.runtimes;
  d["trainers"] = s.trainers;
  d["model"] = {{"width", s.width}, {"hidden", s.hidden}, {"layers", s.layers}, {"grid", {s.dims, s.side}}, {"k", s.k}, {"dense", s.dense}};
  d["training"] = {{"batch", s.batch}, {"lr", s.lr}, {"expert_lr", s.expert_lr}, {"duration_s", s.duration_s},
                   {"delay_ms", s.delay_s * 1000}, {"in_flight", s.in_flight}, {"eval_every", s.eval_every},
                   {"eval_samples", s.eval_samples}};
  d["timeouts"] = {{"forward_s", s.forward_timeout_s}, {"backward_s", s.backward_timeout_s}};
  d["experts"] = {{"alive_for_s", s.alive_for_s}, {"announce_period_s", s.announce_period_s},
                  {"checkpoint_period_s", s.checkpoint_period_s}, {"watch_period_s", s.watch_period_s},
                  {"lapsed_checks", s.lapsed_checks}};
  nlohmann::ordered_json root;
  root["dmoe"] = d;
  return root.dump(2) + "\n";
}

bool is_dmoe_live(const std::string& json_text) {
  const json root = json::parse(json_text, nullptr, false);
  return root.is_object() && root.contains("dmoe");
}

}  // namespace swarmlab::scenarios
