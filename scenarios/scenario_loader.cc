#include "scenarios/scenario_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/input_error.h"
#include "core/input_limits.h"
#include "scenarios/json_reader.h"
#include "traces/text.h"
#include "traces/units.h"

namespace swarmlab::scenarios {

namespace {

using json = nlohmann::json;
namespace limits = core::limits;
using namespace json_input;

// ---------------------------------------------------------------------------------------------
// Loader state and error reporting

struct Loader : json_input::Reader {
  std::string base_dir;  // relative trace paths start here
  Scenario sc;
  // Names a pair cap may use: every peer and every JSON peer entry ("group"), each mapped to the
  // range of peer indices it stands for. Peer and group names share one namespace.
  std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> ranges;
  std::map<std::string, std::string, std::less<>> defined_at;  // name -> JSON path defining it
  traces::PeerNames peer_names;
  traces::PeerNames group_names;  // entries with "count"
};

// How an injected failure leaves: false = crash, true = silent.
constexpr core::Named<bool> kDepartureNames[] = {{false, "crash"}, {true, "silent"}};

// A peer name (traces/text.h's rule).
std::string get_peer_name(const Loader& L, const json& v, const std::string& path) {
  const std::string s = get_string(L, v, path);
  if (!traces::is_valid_peer_name(s))
    L.fail(path,
           "expected a peer name of " + std::string(traces::kPeerNameRule) + ", got " + traces::quoted(s));
  return s;
}

// The name of a peer or group defined in "peers", as its index range.
std::pair<std::size_t, std::size_t> get_peer_ref(const Loader& L, const json& v, const std::string& path,
                                                 bool groups_allowed) {
  const std::string s = get_string(L, v, path);
  const auto it = L.ranges.find(s);
  if (it != L.ranges.end() && (groups_allowed || L.peer_names.contains(s))) return it->second;
  std::string problem = "unknown peer " + traces::quoted(s) + ": expected the name of a peer";
  if (groups_allowed) problem += " or peer group";
  if (!groups_allowed && L.group_names.contains(s))
    problem = "expected the name of a single peer, got the group " + traces::quoted(s) +
              " (name one of its members, e.g. \"" + s + "-0\")";
  else {
    problem += " (peers: " + traces::list_names(L.peer_names);
    if (groups_allowed && !L.group_names.empty()) problem += "; groups: " + traces::list_names(L.group_names);
    problem += ")";
    traces::PeerNames candidates = L.peer_names;
    if (groups_allowed) candidates.insert(L.group_names.begin(), L.group_names.end());
    if (const auto hint = traces::closest_name(s, candidates); !hint.empty())
      problem += "; did you mean " + traces::quoted(hint) + "?";
  }
  L.fail(path, problem);
}

std::string resolve_path(const Loader& L, const std::string& p) {
  const std::filesystem::path path(p);
  if (path.is_absolute() || L.base_dir.empty()) return p;
  return (std::filesystem::path(L.base_dir) / path).lexically_normal().string();
}

// ---------------------------------------------------------------------------------------------
// Sections: one function each

// The scenario's name becomes part of output paths and is printed: the peer-name rule.
void load_name(Loader& L, const json& v, const std::string& path) {
  const std::string s = get_string(L, v, path);
  if (!traces::is_valid_peer_name(s))
    L.fail(path, "expected a scenario name of " + std::string(traces::kPeerNameRule) +
                     " (it names output folders and files), got " + traces::quoted(s));
  L.sc.name = s;
}

void load_description(Loader& L, const json& v, const std::string& path) {
  L.sc.description = get_string(L, v, path, /*allow_empty=*/true);
}

void load_seed(Loader& L, const json& v, const std::string& path) {
  L.sc.seed = get_uint(L, v, path, 0, UINT64_MAX, "a seed");
}

void load_workload(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "a workload object", {"model", "parameters", "wire_precision", "target_batch"});
  Workload& w = L.sc.workload;
  w.model = get_string(L, f.require("model", "the model's name, e.g. \"resnet50\""), f.path("model"));
  if (!traces::is_valid_peer_name(w.model))
    L.fail(f.path("model"), "expected a model name of " + std::string(traces::kPeerNameRule) + ", got " +
                                traces::quoted(w.model));
  w.parameters = get_uint(L, f.require("parameters", "the number of parameters (a positive integer)"),
                          f.path("parameters"), 1, limits::kMaxParameters, "a positive number of parameters");
  if (const json* p = f.find("wire_precision"))
    w.wire_precision = get_enum(L, *p, f.path("wire_precision"), core::codec::kCodecNames);
  w.target_batch = get_uint(L, f.require("target_batch", "samples per optimizer step (a positive integer)"),
                            f.path("target_batch"), 1, limits::kMaxTargetBatch, "a positive number of samples per step");
}

// One entry of "peers": a single peer, or a group of `count` identical ones.
void load_peer_entry(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "a peer object",
                 {"name", "count", "compute_sps", "bandwidth_bps", "download_bps", "upload_bps", "latency_ms",
                  "reachability", "nat", "join_s", "leave_s", "failure_rate", "max_micro_batch"});
  PeerSpec spec;
  spec.group = get_peer_name(L, f.require("name", "the peer's (or group's) name"), f.path("name"));
  std::optional<std::uint64_t> count;
  if (const json* c = f.find("count"))
    count = get_uint(L, *c, f.path("count"), 1, limits::kMaxPeers, "a positive number of peers in the group");

  spec.compute_sps = check_range(
      L, f.path("compute_sps"),
      get_non_negative(L, f.require("compute_sps", "a non-negative number of samples/s (0 for a peer without accelerator)"),
                       f.path("compute_sps"), "samples/s"),
      0, limits::kMaxComputeSps, "samples/s", "the limit on compute speed");

  const json* sym = f.find("bandwidth_bps");
  const json* down = f.find("download_bps");
  const json* up = f.find("upload_bps");
  if (sym && (down || up))
    L.fail(f.path(down ? "download_bps" : "upload_bps"),
           "cannot be combined with bandwidth_bps: expected either bandwidth_bps (symmetric) or "
           "both download_bps and upload_bps");
  if (sym) {
    spec.download_bps = spec.upload_bps = get_bandwidth(L, *sym, f.path("bandwidth_bps"));
  } else if (down || up) {
    if (!down)
      L.fail(f.path("download_bps"),
             "missing required field: upload_bps is given, so download_bps "
             "is expected too (or bandwidth_bps for a symmetric link)");
    if (!up)
      L.fail(f.path("upload_bps"),
             "missing required field: download_bps is given, so upload_bps "
             "is expected too (or bandwidth_bps for a symmetric link)");
    spec.download_bps = get_bandwidth(L, *down, f.path("download_bps"));
    spec.upload_bps = get_bandwidth(L, *up, f.path("upload_bps"));
  } else {
    L.fail(f.path("bandwidth_bps"),
           "missing required field: expected bandwidth_bps (symmetric) or both "
           "download_bps and upload_bps, in bits/s");
  }

  if (const json* lat = f.find("latency_ms"))
    spec.latency_s = get_duration(L, *lat, f.path("latency_ms"), 1e-3, "milliseconds", limits::kMaxLatencySeconds);
  if (const json* r = f.find("reachability"))
    spec.reachability = get_enum(L, *r, f.path("reachability"), kReachabilityNames);
  if (const json* t = f.find("nat")) {
    if (spec.reachability != Reachability::Client)
      L.fail(f.path("nat"), "only a peer with reachability \"client\" is behind NAT: expected no nat on a public peer");
    spec.nat = get_enum(L, *t, f.path("nat"), kNatTypeNames);
  }
  if (const json* j = f.find("join_s")) spec.join_s = get_duration(L, *j, f.path("join_s"), 1, "seconds");
  if (const json* l = f.find("leave_s")) spec.leave_s = get_duration(L, *l, f.path("leave_s"), 1, "seconds");
  if (spec.join_s && spec.leave_s && *spec.leave_s <= *spec.join_s)
    L.fail(f.path("leave_s"), "expected a time after join_s (" + traces::format_real(*spec.join_s) +
                                  " s), got " + traces::format_real(*spec.leave_s) + " s");
  if (const json* p = f.find("failure_rate")) {
    spec.failure_rate = get_non_negative(L, *p, f.path("failure_rate"), "failures per round (a probability)");
    if (spec.failure_rate > 1)
      L.fail(f.path("failure_rate"), "expected a probability between 0 and 1, got " + p->dump());
  }
  if (const json* m = f.find("max_micro_batch"))
    spec.max_micro_batch = get_uint(L, *m, f.path("max_micro_batch"), 1, limits::kMaxTargetBatch,
                                    "a positive number of samples per forward/backward pass");

  // Names: the entry's own (group) name, then each expanded peer; all unique across the file.
  const auto define = [&](const std::string& name) {
    const auto [it, fresh] = L.defined_at.try_emplace(name, path);
    if (!fresh)
      L.fail(f.path("name"), "duplicate peer name " + traces::quoted(name) + " (already defined by " +
                                 it->second + "): expected unique names");
  };
  const std::size_t first = L.sc.peers.size();
  const std::size_t n = count.value_or(1);
  if (first + n > limits::kMaxPeers)
    L.fail(count ? f.path("count") : path, "too many peers: expected at most " + std::to_string(limits::kMaxPeers) +
                                               " in all, got " + std::to_string(first + n));
  define(spec.group);
  if (count) L.group_names.insert(spec.group);
  for (std::size_t i = 0; i < n; ++i) {
    PeerSpec p = spec;
    if (count) {
      p.name = spec.group + "-" + std::to_string(i);
      if (!traces::is_valid_peer_name(p.name))
        L.fail(f.path("name"), "expanded peer name " + traces::quoted(p.name) + " is too long: expected " +
                                   std::string(traces::kPeerNameRule));
      define(p.name);
    } else {
      p.name = spec.group;
    }
    L.ranges.emplace(p.name, std::pair{first + i, first + i + 1});
    L.peer_names.insert(p.name);
    L.sc.peers.push_back(std::move(p));
  }
  L.ranges.emplace(spec.group, std::pair{first, first + n});
}

void load_peers(Loader& L, const json& v, const std::string& path) {
  if (!v.is_array()) L.fail(path, "expected a non-empty array of peer objects, got " + describe(v));
  if (v.empty()) L.fail(path, "expected at least one peer, got an empty array");
  for (std::size_t i = 0; i < v.size(); ++i) load_peer_entry(L, v[i], element(path, i));
  bool computes = false, reachable = false;
  for (const auto& p : L.sc.peers) {
    computes = computes || p.compute_sps > 0;
    reachable = reachable || p.reachability == Reachability::Public;
  }
  if (!computes) L.fail(path, "expected at least one peer with compute_sps > 0 (no peer can train)");
  if (!reachable)
    L.fail(path,
           "expected at least one peer with reachability \"public\" (client peers cannot connect "
           "to each other)");
}

void load_pair_caps(Loader& L, const json& v, const std::string& path) {
  if (!v.is_array()) L.fail(path, "expected an array of {from, to, bps} objects, got " + describe(v));
  std::unordered_map<std::uint64_t, std::size_t> entry_of;  // from * n + to -> entry index
  const std::uint64_t n = L.sc.peers.size();
  for (std::size_t e = 0; e < v.size(); ++e) {
    const std::string epath = element(path, e);
    const Fields f(L, v[e], epath, "a pair cap object", {"from", "to", "bps", "symmetric"});
    const auto from = get_peer_ref(L, f.require("from", "a peer or group name"), f.path("from"), true);
    const auto to = get_peer_ref(L, f.require("to", "a peer or group name"), f.path("to"), true);
    const double bps = get_bandwidth(L, f.require("bps", "the cap in bits/s"), f.path("bps"));
    const json* s = f.find("symmetric");
    const bool symmetric = s && get_bool(L, *s, f.path("symmetric"));
    if (from.second - from.first == 1 && from == to)
      L.fail(f.path("to"), "expected a peer other than \"from\" (a peer's traffic to itself is not capped)");
    const double pairs = static_cast<double>(from.second - from.first) *
                         static_cast<double>(to.second - to.first) * (symmetric ? 2 : 1);
    if (static_cast<double>(L.sc.pair_caps.size()) + pairs > static_cast<double>(limits::kMaxPairCaps))
      L.fail(epath, "too many pair caps: expected at most " + std::to_string(limits::kMaxPairCaps) +
                        " capped ordered pairs in all, got " + traces::format_plain(static_cast<double>(L.sc.pair_caps.size()) + pairs) +
                        " with this entry");
    const auto add = [&](std::size_t i, std::size_t j) {
      if (i == j) return;
      const auto [it, fresh] = entry_of.try_emplace(i * n + j, e);
      if (!fresh) {
        if (it->second == e) return;  // the same entry covering a pair twice (symmetric, overlapping)
        L.fail(epath, "duplicate cap for " + L.sc.peers[i].name + " -> " + L.sc.peers[j].name +
                          " (already capped by " + element(path, it->second) +
                          "): expected one cap per pair");
      }
      L.sc.pair_caps.push_back({i, j, bps});
    };
    for (std::size_t i = from.first; i < from.second; ++i)
      for (std::size_t j = to.first; j < to.second; ++j) {
        add(i, j);
        if (symmetric) add(j, i);
      }
  }
}

void load_averaging(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "an averaging object",
                 {"strategy", "rounds", "part_bytes", "ps_peer", "group_size", "sender_timeout_s",
                  "reducer_timeout_s", "round_timeout_s", "centered_clip"});
  AveragingSpec& a = L.sc.averaging;
  if (const json* s = f.find("strategy"))
    a.strategy = get_enum(L, *s, f.path("strategy"), core::averaging::kStrategyNames);
  if (const json* r = f.find("rounds"))
    a.rounds = static_cast<std::uint32_t>(
        get_uint(L, *r, f.path("rounds"), 1, limits::kMaxRounds, "a positive number of rounds"));
  if (const json* b = f.find("part_bytes"))
    a.part_bytes = get_uint(L, *b, f.path("part_bytes"), limits::kMinPartBytes, limits::kMaxPartBytes,
                            "a positive part size in bytes");
  if (const json* p = f.find("ps_peer")) {
    const std::size_t i = get_peer_ref(L, *p, f.path("ps_peer"), false).first;
    if (L.sc.peers[i].reachability == Reachability::Client)
      L.fail(f.path("ps_peer"),
             "expected a public peer (a parameter server accepts connections), got the "
             "client peer " +
                 traces::quoted(L.sc.peers[i].name));
    a.ps_peer = i;
  }
  if (const json* g = f.find("group_size"))
    a.group_size = get_uint(L, *g, f.path("group_size"), 2, 1u << 20, "a group size of at least 2");
  if (const json* t = f.find("sender_timeout_s")) a.sender_timeout_s = get_duration(L, *t, f.path("sender_timeout_s"), 1, "seconds");
  if (const json* t = f.find("reducer_timeout_s")) a.reducer_timeout_s = get_duration(L, *t, f.path("reducer_timeout_s"), 1, "seconds");
  if (const json* t = f.find("round_timeout_s")) a.round_timeout_s = get_duration(L, *t, f.path("round_timeout_s"), 1, "seconds");
  for (const auto& [name, value] : {std::pair{"sender_timeout_s", a.sender_timeout_s},
                                    std::pair{"reducer_timeout_s", a.reducer_timeout_s},
                                    std::pair{"round_timeout_s", a.round_timeout_s}})
    if (value && !(*value > 0)) L.fail(f.path(name), "expected a positive timeout");
  if (const json* c = f.find("centered_clip")) {
    const Fields cf(L, *c, f.path("centered_clip"), "a CenteredClip object",
                    {"tau", "iterations", "median_s_per_value", "iteration_s_per_value"});
    core::averaging::CenteredClip clip;
    if (const json* t = cf.find("tau")) {
      clip.tau = get_non_negative(L, *t, cf.path("tau"), "a clip radius");
      if (!(clip.tau > 0)) L.fail(cf.path("tau"), "expected a positive clip radius");
    }
    if (const json* i = cf.find("iterations"))
      clip.iterations = static_cast<std::uint32_t>(get_uint(L, *i, cf.path("iterations"), 1, 1000, "1 to 1000 iterations"));
    for (auto [name, field] : {std::pair{"median_s_per_value", &a.clip_cost.clip_median_s_per_value},
                               std::pair{"iteration_s_per_value", &a.clip_cost.clip_iteration_s_per_value}})
      if (const json* x = cf.find(name))
        *field = check_range(L, cf.path(name), get_non_negative(L, *x, cf.path(name), "seconds of CPU per value"), 0,
                             1e-3, "s", "at most 1 ms of CPU per value");
    if (a.strategy == core::averaging::Strategy::HalvingDoubling)
      L.fail(f.path("centered_clip"), "expected no CenteredClip with strategy \"hd\" (halving-doubling never holds a block's "
                                      "contributions side by side); use ar, ps or ours");
    a.centered_clip = clip;
  }
}

// Checks that trace file `p` exists, reporting a missing one against the scenario field.
std::string trace_path(Loader& L, const json& v, const std::string& path) {
  const std::string p = get_string(L, v, path);
  const std::string resolved = resolve_path(L, p);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(resolved, ec))
    L.fail(path, "expected a readable trace file (paths are relative to the scenario's folder), got " +
                     traces::quoted(p) + ", which resolves to " + traces::quoted(resolved, 200) +
                     (std::filesystem::exists(resolved, ec) ? ": not a regular file" : ": no such file"));
  return resolved;
}

void load_churn_trace(Loader& L, const json& v, const std::string& path) {
  L.sc.churn_trace_path = trace_path(L, v, path);
  L.sc.churn = traces::load_churn_trace(L.sc.churn_trace_path, &L.peer_names);
}

void load_bandwidth_trace(Loader& L, const json& v, const std::string& path) {
  L.sc.bandwidth_trace_path = trace_path(L, v, path);
  L.sc.bandwidth = traces::load_bandwidth_trace(L.sc.bandwidth_trace_path, &L.peer_names);
}

// The top level, in load order (later sections may refer to peers). To add a section: write a
// load_<section> function and add a row.
struct Section {
  std::string_view key;
  bool required;
  std::string_view expected;  // for "missing required field" messages
  void (*load)(Loader&, const json&, const std::string& path);
};

// Injected failures: [{peer, round, after_fraction | at_s, how}].
void load_failures(Loader& L, const json& v, const std::string& path) {
  if (!v.is_array()) L.fail(path, "expected an array of failure objects {peer, round, after_fraction or at_s}, got " + describe(v));
  if (v.size() > limits::kMaxFailures)
    L.fail(path, "expected at most " + std::to_string(limits::kMaxFailures) + " injected failures, got " +
                     std::to_string(v.size()));
  for (std::size_t e = 0; e < v.size(); ++e) {
    const std::string epath = element(path, e);
    const Fields f(L, v[e], epath, "a failure object", {"peer", "round", "after_fraction", "at_s", "how"});
    FailureSpec spec;
    spec.peer = get_peer_ref(L, f.require("peer", "a peer name"), f.path("peer"), false).first;
    if (const json* r = f.find("round"))
      spec.round = static_cast<std::uint32_t>(get_uint(L, *r, f.path("round"), 0, limits::kMaxRounds - 1, "a round index"));
    const json* frac = f.find("after_fraction");
    const json* at = f.find("at_s");
    if (!!frac == !!at)
      L.fail(epath, "expected exactly one of \"after_fraction\" (share of the peer's messages in that round) or "
                    "\"at_s\" (seconds into the round)");
    if (frac) {
      spec.after_fraction = get_non_negative(L, *frac, f.path("after_fraction"), "fraction");
      if (*spec.after_fraction > 1) L.fail(f.path("after_fraction"), "expected a fraction in [0, 1]");
    } else {
      spec.at_s = get_duration(L, *at, f.path("at_s"), 1, "seconds");
    }
    if (const json* h = f.find("how"))
      spec.silent = get_enum(L, *h, f.path("how"), kDepartureNames);
    L.sc.failures.push_back(spec);
  }
}

// How the collaboration trains: {mode, coordination, dpu, micro_batch, duration_s, state_bytes_per_parameter,
// state_chunk_bytes, local_steps, local_batch, metrics_interval_s, vcu_reference_sps}.
void load_training(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "a training object",
                 {"mode", "coordination", "dpu", "micro_batch", "duration_s", "state_bytes_per_parameter", "state_chunk_bytes",
                  "local_steps", "local_batch", "metrics_interval_s", "vcu_reference_sps"});
  TrainingSpec& t = L.sc.training;
  if (const json* m = f.find("mode"))
    t.mode = get_enum(L, *m, f.path("mode"), core::training::kModeNames);
  if (const json* c = f.find("coordination"))
    t.coordination = get_enum(L, *c, f.path("coordination"), kCoordinationNames);
  if (const json* d = f.find("dpu")) t.dpu = get_bool(L, *d, f.path("dpu"));
  if (const json* m = f.find("micro_batch"))
    t.micro_batch = get_uint(L, *m, f.path("micro_batch"), 1, UINT32_MAX, "a positive number of samples");
  if (const json* d = f.find("duration_s")) {
    t.duration_s = get_duration(L, *d, f.path("duration_s"), 1, "seconds");
    if (!(t.duration_s > 0)) L.fail(f.path("duration_s"), "expected a positive duration");
  }
  if (const json* b = f.find("state_bytes_per_parameter"))
    t.state_bytes_per_parameter =
        check_range(L, f.path("state_bytes_per_parameter"),
                    get_non_negative(L, *b, f.path("state_bytes_per_parameter"), "bytes per parameter"), 0,
                    limits::kMaxStateBytesPerParameter, "bytes per parameter", "the limit on state per parameter");
  if (const json* c = f.find("state_chunk_bytes"))
    t.state_chunk_bytes = get_uint(L, *c, f.path("state_chunk_bytes"), limits::kMinStateChunkBytes,
                                   limits::kMaxStateChunkBytes, "a positive chunk size in bytes");
  if (const json* h = f.find("local_steps"))
    t.local_steps = get_uint(L, *h, f.path("local_steps"), 1, UINT32_MAX, "a positive number of local steps");
  if (const json* b = f.find("local_batch"))
    t.local_batch = get_uint(L, *b, f.path("local_batch"), 1, UINT32_MAX, "a positive number of samples");
  if (const json* i = f.find("metrics_interval_s")) {
    t.metrics_interval_s = get_duration(L, *i, f.path("metrics_interval_s"), 1, "seconds");
    check_range(L, f.path("metrics_interval_s"), t.metrics_interval_s, limits::kMinMetricsIntervalSeconds,
                limits::kMaxSeconds, "s", "a metrics bucket of at least 1 s");
  }
  if (const json* r = f.find("vcu_reference_sps")) {
    const double sps = check_range(L, f.path("vcu_reference_sps"),
                                   get_non_negative(L, *r, f.path("vcu_reference_sps"), "samples/s"), 0,
                                   limits::kMaxComputeSps, "samples/s", "the limit on compute speed");
    if (!(sps > 0)) L.fail(f.path("vcu_reference_sps"), "expected a positive number of samples/s");
    t.vcu_reference_sps = sps;
  }
  if (t.mode == core::training::Mode::Diloco && t.local_batch == 0)
    L.fail(f.path("local_batch"), "missing required field: DiLoCo needs samples per local step (local_batch)");
}

// Allowlist authentication: present turns it on; the fields override the measured CPU costs.
void load_auth(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "an auth object {sign_s, sign_s_per_byte, verify_s, verify_s_per_byte}",
                 {"sign_s", "sign_s_per_byte", "verify_s", "verify_s_per_byte"});
  AuthSpec a;
  for (auto [name, field] : {std::pair{"sign_s", &a.sign_s}, std::pair{"sign_s_per_byte", &a.sign_s_per_byte},
                             std::pair{"verify_s", &a.verify_s}, std::pair{"verify_s_per_byte", &a.verify_s_per_byte}})
    if (const json* x = f.find(name))
      *field = check_range(L, f.path(name), get_non_negative(L, *x, f.path(name), "seconds of CPU"), 0, 1,
                           "s", "at most 1 s of CPU per message or byte");
  L.sc.auth = a;
}

// How client peers reach each other: relays (public peers or groups, or "public" for all of them)
// and hole punching.
void load_nat_traversal(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "a nat_traversal object {relays, hole_punching, cone_share}",
                 {"relays", "hole_punching", "cone_share"});
  NatTraversalSpec n;
  if (const json* r = f.find("relays")) {
    const std::string rpath = f.path("relays");
    std::vector<std::pair<std::size_t, std::string>> picked;  // peer, where it was named
    if (r->is_string() && r->get<std::string>() == "public") {
      for (std::size_t i = 0; i < L.sc.peers.size(); ++i)
        if (L.sc.peers[i].reachability == Reachability::Public) picked.emplace_back(i, rpath);
    } else if (r->is_array()) {
      for (std::size_t e = 0; e < r->size(); ++e) {
        const auto [first, last] = get_peer_ref(L, (*r)[e], element(rpath, e), true);
        for (std::size_t i = first; i < last; ++i) picked.emplace_back(i, element(rpath, e));
      }
    } else {
      L.fail(rpath, "expected \"public\" or an array of public peer or group names, got " + describe(*r));
    }
    for (const auto& [i, where] : picked) {
      if (L.sc.peers[i].reachability != Reachability::Public)
        L.fail(where, "expected public peers (a relay accepts connections), got the client peer " +
                          traces::quoted(L.sc.peers[i].name));
      if (std::find(n.relays.begin(), n.relays.end(), i) != n.relays.end())
        L.fail(where, "peer " + traces::quoted(L.sc.peers[i].name) + " is named twice: expected each relay once");
      n.relays.push_back(i);
    }
  }
  if (const json* h = f.find("hole_punching")) {
    if (!h->is_boolean()) L.fail(f.path("hole_punching"), "expected true or false, got " + describe(*h));
    n.hole_punching = h->get<bool>();
  }
  if (const json* c = f.find("cone_share")) {
    n.cone_share = get_non_negative(L, *c, f.path("cone_share"), "a share of client peers");
    if (n.cone_share > 1) L.fail(f.path("cone_share"), "expected a share between 0 and 1, got " + c->dump());
  }
  L.sc.nat_traversal = n;
}

// A DHT-only collaboration (swarmlab sim runs the DHT scale experiment on it).
void load_dht(Loader& L, const json& v, const std::string& path) {
  const Fields f(L, v, path, "a dht object {peers, churn_per_hour, hours}", {"peers", "churn_per_hour", "hours"});
  DhtSpec d;
  d.peers = static_cast<std::uint32_t>(get_uint(L, f.require("peers", "the number of peers"), f.path("peers"), 10,
                                                limits::kMaxDhtPeers, "a number of peers from 10"));
  if (const json* c = f.find("churn_per_hour")) d.churn_per_hour = get_non_negative(L, *c, f.path("churn_per_hour"), "fraction per hour");
  if (d.churn_per_hour > 1) L.fail(f.path("churn_per_hour"), "expected a fraction of peers replaced per hour in [0, 1]");
  if (const json* h = f.find("hours")) d.hours = get_non_negative(L, *h, f.path("hours"), "hours");
  if (!(d.hours > 0)) L.fail(f.path("hours"), "expected a positive number of simulated hours");
  check_range(L, f.path("hours"), d.hours, 0, limits::kMaxSeconds / 3600, "hours", "the limit on any time or duration");
  L.sc.dht = d;
}

constexpr Section kSections[] = {
    {"name", true, "the scenario's name (a non-empty string)", load_name},
    {"description", false, "", load_description},
    {"seed", false, "", load_seed},
    {"workload", true, "a workload object {model, parameters, wire_precision, target_batch}", load_workload},
    {"peers", true, "a non-empty array of peer objects", load_peers},
    {"pair_caps", false, "", load_pair_caps},
    {"averaging", false, "", load_averaging},
    {"churn_trace", false, "", load_churn_trace},
    {"bandwidth_trace", false, "", load_bandwidth_trace},
    {"failures", false, "", load_failures},
    {"dht", false, "", load_dht},
    {"training", false, "", load_training},
    {"auth", false, "", load_auth},
    {"nat_traversal", false, "", load_nat_traversal},
};

}  // namespace

Scenario parse_scenario(const std::string& json_text, const std::string& source_name) {
  Loader L;
  L.source = source_name;
  L.base_dir = std::filesystem::path(source_name).parent_path().string();
  L.sc.source = source_name;
  const json root = json_input::parse_strict(json_text, source_name);
  if (!root.is_object())
    L.fail("", "expected a scenario object {name, workload, peers, ...}, got " + describe(root));
  std::vector<std::string_view> keys;
  for (const auto& s : kSections) keys.push_back(s.key);
  check_fields(L, root, "", "a scenario", keys);
  for (const auto& s : kSections) {
    const auto it = root.find(std::string(s.key));
    // A DHT-only scenario describes its peers in "dht" and trains nothing.
    const bool dht_only = root.contains("dht");
    if (dht_only && (s.key == "workload" || s.key == "peers") && it != root.end())
      L.fail(std::string(s.key), "unexpected in a DHT-only scenario (it has a \"dht\" section): expected no " +
                                     std::string(s.key));
    if (it == root.end()) {
      if (s.required && !(dht_only && (s.key == "workload" || s.key == "peers")))
        L.fail(std::string(s.key), "missing required field: expected " + std::string(s.expected));
      continue;
    }
    s.load(L, *it, std::string(s.key));
  }
  return std::move(L.sc);
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(traces::read_text_file(path, limits::kMaxScenarioFileBytes), path);
}

}  // namespace swarmlab::scenarios
