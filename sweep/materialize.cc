#include "sweep/materialize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "core/input_limits.h"
#include "core/rng.h"
#include "scenarios/scenario_loader.h"
#include "traces/text.h"

namespace swarmlab::sweep {

namespace {

// Bump when the result files' content changes meaning, so old results are not reused.
constexpr int kResultFormat = 1;

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// One JSON entry of "peers" and the peers it becomes.
struct Entry {
  json object;            // the entry as written, with entry-level changes applied
  std::string name;
  bool group = false;     // has "count": members are name-0 .. name-(n-1)
  std::uint64_t count = 1;
  std::vector<json> members;  // per-peer objects once some member differs (empty: all alike)

  std::string member_name(std::uint64_t i) const { return group ? name + "-" + std::to_string(i) : name; }
  // Switches to per-member objects (idempotent).
  void explode() {
    if (!members.empty() || count == 0) return;
    json one = object;
    one.erase("count");
    for (std::uint64_t i = 0; i < count; ++i) {
      members.push_back(one);
      members.back()["name"] = member_name(i);
    }
  }
};

bool targets(const Axis& a, const Entry& e) {
  return a.groups.empty() || std::find(a.groups.begin(), a.groups.end(), e.name) != a.groups.end();
}

// Sets an access-link value on a peer object, turning a symmetric link asymmetric when only one
// direction changes.
void set_link(json& o, Target t, const json& v) {
  if (t == Target::BandwidthBps) {
    o.erase("download_bps");
    o.erase("upload_bps");
    o["bandwidth_bps"] = v;
    return;
  }
  if (o.contains("bandwidth_bps")) {
    o["download_bps"] = o["bandwidth_bps"];
    o["upload_bps"] = o["bandwidth_bps"];
    o.erase("bandwidth_bps");
  }
  o[t == Target::UploadBps ? "upload_bps" : "download_bps"] = v;
}

void set_attribute(json& o, Target t, const json& v) {
  switch (t) {
    case Target::ComputeSps: o["compute_sps"] = v; break;
    case Target::BandwidthBps: case Target::UploadBps: case Target::DownloadBps: set_link(o, t, v); break;
    case Target::LatencyMs: o["latency_ms"] = v; break;
    case Target::FailureRate: o["failure_rate"] = v; break;
    default: break;
  }
}

core::Rng stream(std::uint64_t seed, std::string_view label) { return core::Rng(seed, fnv1a(label)); }

double draw(const PerPeer& p, double centre, core::Rng& rng) {
  if (p.distribution == Distribution::Lognormal) return centre * std::exp(p.param * rng.normal());
  return centre * (1 + p.param * (2 * rng.uniform() - 1));
}

// Up/down sessions: up for Exp(3600 / rate) s, down for Exp(mean_down) s, from up at 0.
void add_churn(traces::ChurnTrace& trace, const std::vector<std::string>& peers, double per_hour, double mean_down_s,
               double horizon_s, std::uint64_t seed, const std::string& axis) {
  std::set<std::string, std::less<>> changed(peers.begin(), peers.end());
  std::vector<traces::ChurnEvent> events;
  for (const auto& e : trace.events)
    if (!changed.contains(e.peer)) events.push_back(e);
  if (per_hour > 0)
    for (const auto& peer : peers) {
      core::Rng rng = stream(seed, "churn/" + axis + "/" + peer);
      double t = 0;
      events.push_back({peer, 0, true});
      while (true) {
        t += rng.exponential(3600 / per_hour);
        if (t >= horizon_s) break;
        events.push_back({peer, t, false});
        t += rng.exponential(mean_down_s);
        if (t >= horizon_s) break;
        events.push_back({peer, t, true});
      }
    }
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
  trace.events = std::move(events);
}

// Rewrites pair caps that name entries which are now written peer by peer (or removed).
void rewrite_pair_caps(json& j, const std::map<std::string, std::vector<std::string>>& replaced) {
  if (!j.contains("pair_caps")) return;
  json out = json::array();
  for (const auto& cap : j["pair_caps"]) {
    const std::string from = cap.at("from").get<std::string>(), to = cap.at("to").get<std::string>();
    const auto f = replaced.find(from), t = replaced.find(to);
    if (f == replaced.end() && t == replaced.end()) {
      out.push_back(cap);
      continue;
    }
    const std::vector<std::string> froms = f == replaced.end() ? std::vector<std::string>{from} : f->second;
    const std::vector<std::string> tos = t == replaced.end() ? std::vector<std::string>{to} : t->second;
    const bool symmetric = cap.value("symmetric", false);
    std::set<std::pair<std::string, std::string>> seen;
    const auto add = [&](const std::string& a, const std::string& b) {
      if (a == b || !seen.insert({a, b}).second) return;
      out.push_back({{"from", a}, {"to", b}, {"bps", cap.at("bps")}});
    };
    for (const auto& a : froms)
      for (const auto& b : tos) {
        add(a, b);
        if (symmetric) add(b, a);
      }
  }
  j["pair_caps"] = std::move(out);
}

}  // namespace

std::string digest(std::string_view text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return buf;
}

std::string run_key(const SweepSpec& spec, const RunDesc& run) {
  json axes = json::array();
  for (const Axis& a : spec.axes) {
    json d = {{"name", a.name}, {"set", std::string(core::name_of(kTargetNames, a.target))}, {"groups", a.groups},
              {"pointer", a.pointer}, {"mean_down_s", a.mean_down_s}};
    if (a.per_peer)
      d["per_peer"] = {{"distribution", std::string(core::name_of(kDistributionNames, a.per_peer->distribution))},
                       {"param", a.per_peer->param}};
    axes.push_back(std::move(d));
  }
  json traces = json::object();
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    if (a.target != Target::ChurnTrace) continue;
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (a.values[i] == run.values[k] && !a.trace_paths[i].empty())
        traces[a.values[i].get<std::string>()] = digest(traces::read_text_file(a.trace_paths[i], core::limits::kMaxTraceFileBytes));
  }
  const ExperimentSpec& e = spec.experiment;
  json experiment = {{"run", std::string(core::name_of(kExperimentNames, e.run))},
                     {"backend", e.backend},
                     {"replay", e.replay_rounds}};
  if (e.rounds) experiment["rounds"] = *e.rounds;
  if (e.duration_s) experiment["duration_s"] = *e.duration_s;
  const json all = {{"format", kResultFormat}, {"base", spec.base},   {"experiment", experiment}, {"axes", axes},
                    {"values", run.values},    {"seed", run.seed},    {"traces", traces},
                    {"index", run.index},      {"composition", run.composition}};
  return digest(all.dump());
}

Materialized materialize(const SweepSpec& spec, const RunDesc& run) {
  json j = spec.base;
  j["seed"] = run.seed;
  std::vector<Entry> entries;
  for (const auto& o : j.at("peers")) {
    Entry e;
    e.object = o;
    e.name = o.at("name").get<std::string>();
    e.group = o.contains("count");
    e.count = e.group ? o["count"].get<std::uint64_t>() : 1;
    entries.push_back(std::move(e));
  }

  // 1. The whole scenario, and counts.
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    const json& v = run.values[k];
    switch (a.target) {
      case Target::Count:
        for (auto& e : entries)
          if (targets(a, e)) {
            e.group = true;
            e.count = v.get<std::uint64_t>();
            e.object["count"] = e.count;
          }
        break;
      case Target::Strategy: j["averaging"]["strategy"] = v; break;
      case Target::GroupSize:
        if (v.is_null()) {
          if (j.contains("averaging")) j["averaging"].erase("group_size");
        } else {
          j["averaging"]["group_size"] = v;
        }
        break;
      case Target::Codec: j["workload"]["wire_precision"] = v; break;
      case Target::Coordination: j["training"]["coordination"] = v; break;
      case Target::Dpu: j["training"]["dpu"] = v; break;
      case Target::ChurnTrace: {
        const auto at = std::find(a.values.begin(), a.values.end(), v) - a.values.begin();
        const std::string& file = a.trace_paths[static_cast<std::size_t>(at)];
        if (file.empty()) j.erase("churn_trace");
        else j["churn_trace"] = file;
        break;
      }
      case Target::Field: j[json::json_pointer(a.pointer)] = v; break;
      default: break;
    }
  }
  // 2. Values every peer of an entry shares.
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    if (a.per_peer) continue;
    for (auto& e : entries)
      if (targets(a, e)) set_attribute(e.object, a.target, run.values[k]);
  }
  // 3. Per-peer draws around the axis value.
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    if (!a.per_peer) continue;
    const double centre = run.values[k].get<double>();
    for (auto& e : entries) {
      if (!targets(a, e)) continue;
      set_attribute(e.object, a.target, centre);
      e.explode();
      core::Rng rng = stream(run.seed, "per_peer/" + a.name + "/" + e.name);
      for (auto& m : e.members) set_attribute(m, a.target, draw(*a.per_peer, centre, rng));
    }
  }
  // 4. Client shares: which peers are behind NAT, drawn over the union of the named entries.
  std::string ps_peer;
  if (j.contains("averaging") && j["averaging"].contains("ps_peer")) ps_peer = j["averaging"]["ps_peer"].get<std::string>();
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    if (a.target != Target::ClientShare) continue;
    std::vector<json*> pool;  // eligible peers, in file order
    std::size_t total = 0;
    for (auto& e : entries) {
      if (!targets(a, e)) continue;
      e.explode();
      for (auto& m : e.members) {
        m["reachability"] = "public";
        ++total;
        if (m["name"].get<std::string>() != ps_peer) pool.push_back(&m);
      }
    }
    const auto want = static_cast<std::size_t>(std::floor(run.values[k].get<double>() * static_cast<double>(total) + 0.5));
    const std::size_t clients = std::min(want, pool.size());
    core::Rng rng = stream(run.seed, "client_share/" + a.name);
    for (std::size_t i = 0; i < clients; ++i) {  // partial Fisher-Yates
      std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
      (*pool[i])["reachability"] = "client";
    }
  }
  // 5. Write the peers back: an entry whose members all agree stays one entry.
  json peers = json::array();
  std::map<std::string, std::vector<std::string>> replaced;  // entry name -> the names that stand for it now
  std::map<std::string, std::vector<std::string>> members_of;
  for (auto& e : entries) {
    std::vector<std::string> names;
    for (std::uint64_t i = 0; i < e.count; ++i) names.push_back(e.member_name(i));
    members_of[e.name] = names;
    if (e.count == 0) {
      replaced[e.name] = {};
      continue;
    }
    bool alike = true;
    for (std::size_t i = 1; i < e.members.size() && alike; ++i) {
      json a = e.members[0], b = e.members[i];
      a.erase("name");
      b.erase("name");
      alike = a == b;
    }
    if (e.members.empty() || alike) {
      json o = e.members.empty() ? e.object : e.members[0];
      o["name"] = e.name;
      if (e.group) o["count"] = e.count;
      peers.push_back(std::move(o));
    } else {
      for (auto& m : e.members) peers.push_back(std::move(m));
      if (e.group) replaced[e.name] = names;
    }
  }
  j["peers"] = std::move(peers);
  rewrite_pair_caps(j, replaced);

  Materialized m;
  m.scenario = scenarios::parse_scenario(j.dump(), spec.base_source);
  // 6. Churn rates: a generated trace over the run's horizon.
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const Axis& a = spec.axes[k];
    if (a.target != Target::ChurnPerHour) continue;
    std::vector<std::string> names;
    for (const auto& e : entries)
      if (targets(a, e))
        for (const auto& n : members_of[e.name]) names.push_back(n);
    const double horizon = spec.experiment.duration_s.value_or(m.scenario.training.duration_s);
    add_churn(m.scenario.churn, names, run.values[k].get<double>(), a.mean_down_s, horizon, run.seed, a.name);
  }
  m.scenario_json = std::move(j);
  return m;
}

}  // namespace swarmlab::sweep
