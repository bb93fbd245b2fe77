#include "sweep/spec_loader.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "core/averaging/strategy.h"
#include "core/codec/codec.h"
#include "core/input_limits.h"
#include "scenarios/json_reader.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_loader.h"
#include "sim/network/backend.h"
#include "sweep/columns.h"
#include "traces/text.h"

namespace swarmlab::sweep {

namespace {

using namespace scenarios::json_input;

struct SpecReader : Reader {
  std::string base_dir;  // relative paths in the spec start here
  SweepSpec spec;
  traces::PeerNames entries;  // the base scenario's peer entry names
};

std::string resolve(const SpecReader& R, const std::string& p) {
  const std::filesystem::path path(p);
  if (path.is_absolute() || R.base_dir.empty()) return p;
  return (std::filesystem::path(R.base_dir) / path).lexically_normal().string();
}

// The problem of an InputError, without its "source: location: " prefix.
std::string problem_of(const core::InputError& e) {
  std::string prefix = e.source();
  if (!e.location().empty()) prefix += ": " + e.location();
  prefix += ": ";
  const std::string what = e.what();
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// ---------------------------------------------------------------------------------------------
// base

void load_base(SpecReader& R, const json& v, const std::string& path) {
  SweepSpec& s = R.spec;
  if (v.is_string()) {
    const std::string given = get_string(R, v, path);
    const std::string file = resolve(R, given);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
      R.fail(path, "expected a readable scenario file (relative to the spec's folder), got " + traces::quoted(given) +
                       ", which resolves to " + traces::quoted(file, 200) +
                       (std::filesystem::exists(file, ec) ? ": not a regular file" : ": no such file"));
    const std::string text = traces::read_text_file(file, core::limits::kMaxScenarioFileBytes);
    s.base = parse_strict(text, file);
    s.base_source = file;
    if (s.base.is_object() && s.base.contains("dht"))
      throw core::InputError(file, "dht", "a sweep needs a scenario with peers and a workload, got a DHT-only scenario");
    scenarios::parse_scenario(text, file);  // its errors name the base file
  } else if (v.is_object()) {
    s.base = v;
    s.base_source = R.source;
    if (v.contains("dht"))
      R.fail(child(path, "dht"), "a sweep needs a scenario with peers and a workload, got a DHT-only scenario");
    try {
      scenarios::parse_scenario(v.dump(), R.source);
    } catch (const core::InputError& e) {
      const std::string where = e.location() == "top level" ? path : child(path, e.location());
      throw core::InputError(e.source(), e.source() == R.source ? where : e.location(), problem_of(e));
    }
  } else {
    R.fail(path, "expected the base scenario: a path (relative to the spec's folder) or a scenario object, got " +
                     describe(v));
  }
  for (const auto& entry : s.base.at("peers")) R.entries.insert(entry.at("name").get<std::string>());
}

// ---------------------------------------------------------------------------------------------
// experiment, sampling, seeds

void load_experiment(SpecReader& R, const json& v, const std::string& path) {
  const Fields f(R, v, path, "an experiment object {run, backend, rounds | duration_s, replay}",
                 {"run", "backend", "rounds", "duration_s", "replay"});
  ExperimentSpec& e = R.spec.experiment;
  e.run = get_enum(R, f.require("run", "\"averaging\" or \"training\""), f.path("run"), kExperimentNames);
  if (const json* b = f.find("backend")) {
    e.backend = get_string(R, *b, f.path("backend"));
    const auto backends = sim::available_backends();
    bool known = false;
    std::string list;
    for (const auto& name : backends) known = known || name == e.backend, list += (list.empty() ? "\"" : ", \"") + name + "\"";
    if (!known) R.fail(f.path("backend"), "expected one of " + list + ", got " + describe(*b));
  }
  if (const json* r = f.find("rounds")) {
    if (e.run != Experiment::Averaging)
      R.fail(f.path("rounds"), "expected no rounds in a training experiment (it runs for duration_s)");
    e.rounds = static_cast<std::uint32_t>(get_uint(R, *r, f.path("rounds"), 1, 1'000'000, "a positive number of rounds"));
  }
  if (const json* d = f.find("duration_s")) {
    if (e.run != Experiment::Training)
      R.fail(f.path("duration_s"), "expected no duration_s in an averaging experiment (it runs a number of rounds)");
    e.duration_s = get_duration(R, *d, f.path("duration_s"), 1, "seconds");
    if (!(*e.duration_s > 0)) R.fail(f.path("duration_s"), "expected a positive duration");
  }
  if (const json* r = f.find("replay")) e.replay_rounds = get_bool(R, *r, f.path("replay"));
}

void load_sampling(SpecReader& R, const json& v, const std::string& path) {
  const Fields f(R, v, path, "a sampling object {method, count, seed}", {"method", "count", "seed"});
  Sampling& s = R.spec.sampling;
  s.method = get_enum(R, f.require("method", "\"grid\", \"random\" or \"latin_hypercube\""), f.path("method"), kMethodNames);
  if (const json* c = f.find("count")) s.count = get_uint(R, *c, f.path("count"), 1, kMaxRuns, "a positive count");
  if (s.method != Method::Grid && !s.count)
    R.fail(f.path("count"), "missing required field: expected the number of points to sample (a positive integer)");
  if (const json* sd = f.find("seed")) s.seed = get_uint(R, *sd, f.path("seed"), 0, UINT64_MAX, "a seed");
}

void load_seeds(SpecReader& R, const json& v, const std::string& path) {
  auto& seeds = R.spec.seeds;
  if (v.is_array()) {
    if (v.empty()) R.fail(path, "expected at least one seed, got an empty array");
    std::set<std::uint64_t> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::uint64_t s = get_uint(R, v[i], element(path, i), 0, UINT64_MAX, "a seed");
      if (!seen.insert(s).second) R.fail(element(path, i), "duplicate seed " + std::to_string(s) + ": expected each seed once");
      seeds.push_back(s);
    }
    return;
  }
  if (!v.is_number())
    R.fail(path, "expected an array of seeds or a number of seeds (1..n), got " + describe(v));
  const std::uint64_t n = get_uint(R, v, path, 1, 100'000, "a number of seeds");
  for (std::uint64_t s = 1; s <= n; ++s) seeds.push_back(s);
}

// ---------------------------------------------------------------------------------------------
// axes

bool is_numeric(Target t) {
  switch (t) {
    case Target::ChurnTrace: case Target::Strategy: case Target::Codec: case Target::Coordination: case Target::Dpu:
      return false;
    default: return true;
  }
}

std::string what_values(Target t) {
  switch (t) {
    case Target::Count: return "a number of peers (an integer from 0 to 100000)";
    case Target::ComputeSps: return "a non-negative number of samples/s";
    case Target::BandwidthBps: case Target::UploadBps: case Target::DownloadBps:
      return "a bandwidth (bits/s, or a string with a unit such as \"20 Mb/s\")";
    case Target::LatencyMs: return "a latency (milliseconds, or a string with a unit such as \"25ms\")";
    case Target::ClientShare: return "a share of peers in [0, 1]";
    case Target::FailureRate: return "a probability in [0, 1]";
    case Target::ChurnPerHour: return "a non-negative rate of departures per peer and hour";
    case Target::ChurnTrace: return "a churn trace file (relative to the spec's folder) or \"none\"";
    case Target::Strategy: return "a strategy name";
    case Target::GroupSize: return "a group size (an integer of at least 2) or \"none\"";
    case Target::Codec: return "a codec name";
    case Target::Coordination: return "a coordination name";
    case Target::Dpu: return "true or false";
    case Target::Field: return "a value for the field";
  }
  return "";
}

// Reads one value of an axis (a list element or a range end), normalised to the table's unit.
json read_value(SpecReader& R, Axis& a, const json& v, const std::string& path) {
  switch (a.target) {
    case Target::Count: return get_uint(R, v, path, 0, 100'000, "a number of peers");
    case Target::ComputeSps: return get_non_negative(R, v, path, "samples/s");
    case Target::BandwidthBps: case Target::UploadBps: case Target::DownloadBps: return get_bandwidth(R, v, path);
    case Target::LatencyMs: return get_duration(R, v, path, 1e-3, "milliseconds") * 1e3;
    case Target::ClientShare: case Target::FailureRate: {
      const double p = get_non_negative(R, v, path, "a share");
      if (p > 1) R.fail(path, "expected " + what_values(a.target) + ", got " + v.dump());
      return p;
    }
    case Target::ChurnPerHour: return get_non_negative(R, v, path, "departures per hour");
    case Target::ChurnTrace: {
      const std::string p = get_string(R, v, path);
      if (p == "none") {
        a.trace_paths.emplace_back();
        return p;
      }
      const std::string file = resolve(R, p);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(file, ec))
        R.fail(path, "expected a readable churn trace file (relative to the spec's folder) or \"none\", got " +
                         traces::quoted(p) + ", which resolves to " + traces::quoted(file, 200) + ": no such file");
      a.trace_paths.push_back(std::filesystem::absolute(file).lexically_normal().string());
      return p;
    }
    case Target::Strategy: return std::string(core::name_of(core::averaging::kStrategyNames,
                                                            get_enum(R, v, path, core::averaging::kStrategyNames)));
    case Target::Codec: return std::string(core::name_of(core::codec::kCodecNames, get_enum(R, v, path, core::codec::kCodecNames)));
    case Target::Coordination:
      return std::string(core::name_of(scenarios::kCoordinationNames, get_enum(R, v, path, scenarios::kCoordinationNames)));
    case Target::Dpu: return get_bool(R, v, path);
    case Target::GroupSize:
      if (v.is_string() && v.get_ref<const std::string&>() == "none") return nullptr;
      if (!v.is_number()) R.fail(path, "expected " + what_values(a.target) + ", got " + describe(v));
      return get_uint(R, v, path, 2, 1u << 20, "a group size of at least 2");
    case Target::Field: return v;
  }
  return v;
}

// A "field" axis value must give a valid scenario when it is the only change to the base.
void check_field_value(SpecReader& R, const Axis& a, const json& value, const std::string& path) {
  json j = R.spec.base;
  j[json::json_pointer(a.pointer)] = value;
  try {
    scenarios::parse_scenario(j.dump(), R.spec.base_source);
  } catch (const core::InputError& e) {
    R.fail(path, "expected a value that gives a valid scenario, got " + describe(value) + ": " + problem_of(e) +
                     " (at " + e.location() + ")");
  }
}

void load_per_peer(SpecReader& R, Axis& a, const json& v, const std::string& path) {
  switch (a.target) {
    case Target::ComputeSps: case Target::BandwidthBps: case Target::UploadBps: case Target::DownloadBps:
    case Target::LatencyMs: break;
    default:
      R.fail(path, "per_peer applies to compute_sps, bandwidth_bps, upload_bps, download_bps and latency_ms axes, "
                   "not to " + std::string(core::name_of(kTargetNames, a.target)));
  }
  const Fields f(R, v, path, "a per_peer object {distribution, sigma | spread}", {"distribution", "sigma", "spread"});
  PerPeer p;
  p.distribution = get_enum(R, f.require("distribution", "\"lognormal\" or \"uniform\""), f.path("distribution"),
                            kDistributionNames);
  const char* key = p.distribution == Distribution::Lognormal ? "sigma" : "spread";
  const char* other = p.distribution == Distribution::Lognormal ? "spread" : "sigma";
  if (f.find(other))
    R.fail(f.path(other), std::string("expected ") + key + " for a " +
                              std::string(core::name_of(kDistributionNames, p.distribution)) + " distribution, not " + other);
  p.param = get_non_negative(R, f.require(key, key == std::string("sigma") ? "sigma of the log (a non-negative number)"
                                                                        : "the relative half-width in [0, 1]"),
                             f.path(key), key == std::string("sigma") ? "sigma" : "relative half-width");
  if (p.distribution == Distribution::Uniform && p.param > 1)
    R.fail(f.path(key), "expected a relative half-width in [0, 1] (values stay non-negative), got " +
                            traces::format_real(p.param));
  a.per_peer = p;
}

bool valid_column_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

void load_axis(SpecReader& R, const json& v, const std::string& path) {
  const Fields f(R, v, path, "an axis object {name, set, group, values | range, ...}",
                 {"name", "set", "group", "path", "values", "range", "scale", "steps", "crossed", "per_peer", "mean_down_s"});
  Axis a;
  a.path = path;
  a.target = get_enum(R, f.require("set", "what the axis changes (e.g. \"count\", \"strategy\")"), f.path("set"), kTargetNames);
  a.integer = a.target == Target::Count || a.target == Target::GroupSize;

  if (const json* g = f.find("group")) {
    if (!is_group_target(a.target))
      R.fail(f.path("group"), "expected no group: a " + std::string(core::name_of(kTargetNames, a.target)) +
                                  " axis changes the whole scenario");
    const auto check = [&](const json& name, const std::string& p) {
      const std::string s = get_string(R, name, p);
      if (!R.entries.contains(s)) {
        std::string problem = "unknown peer entry " + traces::quoted(s) + ": expected the name of an entry in the base "
                              "scenario's peers (" + traces::list_names(R.entries) + ")";
        if (const auto hint = traces::closest_name(s, R.entries); !hint.empty())
          problem += "; did you mean " + traces::quoted(hint) + "?";
        R.fail(p, problem);
      }
      for (const auto& seen : a.groups)
        if (seen == s) R.fail(p, "duplicate entry " + traces::quoted(s) + ": expected each entry once");
      a.groups.push_back(s);
    };
    if (g->is_array()) {
      if (g->empty()) R.fail(f.path("group"), "expected at least one entry name, got an empty array");
      for (std::size_t i = 0; i < g->size(); ++i) check((*g)[i], element(f.path("group"), i));
    } else {
      check(*g, f.path("group"));
    }
  }
  if (const json* p = f.find("path")) {
    if (a.target != Target::Field)
      R.fail(f.path("path"), "expected no path: only a \"field\" axis takes a JSON pointer");
    a.pointer = get_string(R, *p, f.path("path"));
    try {
      const json::json_pointer ptr(a.pointer);
      if (ptr.empty()) throw std::invalid_argument("empty");
    } catch (const std::exception&) {
      R.fail(f.path("path"), "expected a JSON pointer to a scenario field such as \"/averaging/part_bytes\", got " +
                                 traces::quoted(a.pointer));
    }
    const std::string top = a.pointer.substr(1, a.pointer.find('/', 1) - 1);
    if (top == "seed")
      R.fail(f.path("path"), "expected a field other than /seed: seeds come from the spec's \"seeds\"");
  } else if (a.target == Target::Field) {
    R.fail(f.path("path"), "missing required field: a \"field\" axis needs a JSON pointer such as \"/averaging/part_bytes\"");
  }

  // Name: given, or the target (and its one group).
  if (const json* n = f.find("name")) {
    a.name = get_string(R, *n, f.path("name"));
    if (!valid_column_name(a.name))
      R.fail(f.path("name"), "expected a column name (1 to 64 characters from A-Z a-z 0-9 _ . -, starting with a "
                             "letter or _), got " + traces::quoted(a.name));
  } else {
    a.name = a.target == Target::Field ? "field" + a.pointer : std::string(core::name_of(kTargetNames, a.target));
    if (a.target == Target::Field)
      for (char& c : a.name) c = c == '/' ? '.' : c;
    if (a.groups.size() == 1) a.name += "." + a.groups[0];
    if (!valid_column_name(a.name))
      R.fail(f.path("set"), "the default column name " + traces::quoted(a.name) + " is not usable: give the axis a \"name\"");
  }

  const json* values = f.find("values");
  const json* range = f.find("range");
  if (!!values == !!range)
    R.fail(path, "expected exactly one of \"values\" (a list) or \"range\" ([low, high])");
  if (values) {
    if (!values->is_array()) R.fail(f.path("values"), "expected an array of " + what_values(a.target) + ", got " + describe(*values));
    if (values->empty()) R.fail(f.path("values"), "expected at least one value, got an empty array");
    if (values->size() > 100'000) R.fail(f.path("values"), "expected at most 100000 values");
    for (std::size_t i = 0; i < values->size(); ++i) {
      const json value = read_value(R, a, (*values)[i], element(f.path("values"), i));
      for (std::size_t k = 0; k < a.values.size(); ++k)
        if (a.values[k] == value)
          R.fail(element(f.path("values"), i), "duplicate value (the same as values[" + std::to_string(k) +
                                                   "]): expected each value once");
      if (a.target == Target::Field) check_field_value(R, a, value, element(f.path("values"), i));
      a.values.push_back(value);
    }
    for (const char* k : {"scale", "steps"})
      if (f.find(k)) R.fail(f.path(k), std::string("expected no ") + k + " with a list of values (it applies to a range)");
  } else {
    if (!is_numeric(a.target))
      R.fail(f.path("range"), "expected \"values\": a " + std::string(core::name_of(kTargetNames, a.target)) +
                                  " axis takes a list, not a range");
    if (!range->is_array() || range->size() != 2)
      R.fail(f.path("range"), "expected [low, high], got " + describe(*range) +
                                  (range->is_array() ? " of " + std::to_string(range->size()) + " elements" : ""));
    double ends[2];
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string p = element(f.path("range"), i);
      if (a.target == Target::GroupSize && !(*range)[i].is_number())
        R.fail(p, "expected a group size (an integer of at least 2), got " + describe((*range)[i]));
      if (a.target == Target::Field && !(*range)[i].is_number())
        R.fail(p, "expected a number, got " + describe((*range)[i]));
      const json value = read_value(R, a, (*range)[i], p);
      ends[i] = value.get<double>();
      if (a.target == Target::Field) check_field_value(R, a, value, p);
    }
    if (ends[1] < ends[0])
      R.fail(element(f.path("range"), 1), "expected high >= low (" + traces::format_real(ends[0]) + "), got " +
                                              traces::format_real(ends[1]));
    a.lo = ends[0];
    a.hi = ends[1];
    if (const json* sc = f.find("scale")) {
      const std::string s = get_string(R, *sc, f.path("scale"));
      if (s != "linear" && s != "log") R.fail(f.path("scale"), "expected \"linear\" or \"log\", got " + describe(*sc));
      a.log_scale = s == "log";
      if (a.log_scale && !(*a.lo > 0))
        R.fail(element(f.path("range"), 0), "expected a positive low end for a log scale, got " + traces::format_real(*a.lo));
    }
    if (const json* st = f.find("steps")) a.steps = get_uint(R, *st, f.path("steps"), 1, 100'000, "a number of grid levels");
  }
  if (const json* c = f.find("crossed")) a.crossed = get_bool(R, *c, f.path("crossed"));
  if (const json* p = f.find("per_peer")) load_per_peer(R, a, *p, f.path("per_peer"));
  if (const json* d = f.find("mean_down_s")) {
    if (a.target != Target::ChurnPerHour)
      R.fail(f.path("mean_down_s"), "expected no mean_down_s: it applies to a churn_per_hour axis");
    a.mean_down_s = get_duration(R, *d, f.path("mean_down_s"), 1, "seconds");
    if (!(a.mean_down_s > 0)) R.fail(f.path("mean_down_s"), "expected a positive mean time down");
  }
  R.spec.axes.push_back(std::move(a));
}

void load_axes(SpecReader& R, const json& v, const std::string& path) {
  if (!v.is_array()) R.fail(path, "expected a non-empty array of axis objects, got " + describe(v));
  if (v.empty()) R.fail(path, "expected at least one axis, got an empty array");
  std::map<std::string, std::string> changed_by;  // what an axis changes -> the axis's path
  std::map<std::string, std::string> named;       // column name -> path
  for (std::size_t i = 0; i < v.size(); ++i) {
    load_axis(R, v[i], element(path, i));
    const Axis& a = R.spec.axes.back();
    if (const auto [it, fresh] = named.try_emplace(a.name, a.path); !fresh)
      R.fail(child(a.path, "name"), "duplicate axis name " + traces::quoted(a.name) + " (" + it->second +
                                        " has it): expected unique names");
    if (is_reserved_column(a.name))
      R.fail(child(a.path, "name"), "the name " + traces::quoted(a.name) + " is a column of the table: expected another name");
    // Two axes must not change the same thing (the later would silently win).
    std::vector<std::string> keys;
    const std::string target(core::name_of(kTargetNames, a.target));
    if (a.target == Target::Field) {
      keys.push_back("field " + a.pointer);
    } else if (is_group_target(a.target)) {
      if (a.groups.empty())
        for (const auto& e : R.entries) keys.push_back(target + " of " + e);
      for (const auto& g : a.groups) keys.push_back(target + " of " + g);
    } else {
      keys.push_back(target);
    }
    for (const auto& k : keys)
      if (const auto [it, fresh] = changed_by.try_emplace(k, a.path); !fresh)
        R.fail(child(a.path, "set"), "this axis changes the " + k + ", as " + it->second +
                                         " does: expected one axis per setting");
  }
}

// Grid levels and totals: checked once everything is read.
void check_plan_size(SpecReader& R) {
  const SweepSpec& s = R.spec;
  double points = 1, crossed = 1;
  for (const Axis& a : s.axes) {
    const bool on_grid = a.crossed || s.sampling.method == Method::Grid;
    double levels = static_cast<double>(a.values.size());
    if (a.lo) {
      if (on_grid && !a.steps && !s.sampling.count)
        R.fail(a.path, "a range on a grid needs levels: expected \"steps\" here or \"count\" in sampling");
      levels = static_cast<double>(a.steps ? *a.steps : s.sampling.count.value_or(1));
    }
    if (a.crossed || s.sampling.method == Method::Grid)
      (a.crossed ? crossed : points) *= levels;
  }
  if (s.sampling.method != Method::Grid) points = static_cast<double>(*s.sampling.count);
  const double runs = points * crossed * static_cast<double>(s.seeds.size());
  if (runs > static_cast<double>(kMaxRuns))
    R.fail("axes", "the sweep has " + traces::format_real(runs) + " runs: expected at most " + std::to_string(kMaxRuns));
}

struct Section {
  std::string_view key;
  bool required;
  std::string_view expected;
  void (*load)(SpecReader&, const json&, const std::string&);
};

constexpr Section kSections[] = {
    {"name", true, "the sweep's name (a non-empty string)",
     [](SpecReader& R, const json& v, const std::string& p) {
       R.spec.name = get_string(R, v, p);
       if (!traces::is_valid_peer_name(R.spec.name))
         R.fail(p, "expected a name of " + std::string(traces::kPeerNameRule) + " (it names the output folder), got " +
                       traces::quoted(R.spec.name));
     }},
    {"description", false, "", [](SpecReader& R, const json& v, const std::string& p) { R.spec.description = get_string(R, v, p, true); }},
    {"base", true, "the base scenario: a path or a scenario object", load_base},
    {"experiment", true, "an experiment object {run: \"averaging\" or \"training\", ...}", load_experiment},
    {"sampling", false, "", load_sampling},
    {"seeds", false, "", load_seeds},
    {"axes", true, "a non-empty array of axis objects", load_axes},
};

}  // namespace

bool is_group_target(Target t) {
  switch (t) {
    case Target::Count: case Target::ComputeSps: case Target::BandwidthBps: case Target::UploadBps:
    case Target::DownloadBps: case Target::LatencyMs: case Target::ClientShare: case Target::FailureRate:
    case Target::ChurnPerHour:
      return true;
    default: return false;
  }
}

SweepSpec parse_sweep_spec(const std::string& json_text, const std::string& source_name) {
  SpecReader R;
  R.source = source_name;
  R.base_dir = std::filesystem::path(source_name).parent_path().string();
  R.spec.source = source_name;
  const json root = parse_strict(json_text, source_name);
  if (!root.is_object()) R.fail("", "expected a sweep object {name, base, experiment, axes, ...}, got " + describe(root));
  std::vector<std::string_view> keys;
  for (const auto& s : kSections) keys.push_back(s.key);
  check_fields(R, root, "", "a sweep spec", keys);
  for (const auto& s : kSections) {
    const auto it = root.find(std::string(s.key));
    if (it == root.end()) {
      if (s.required) R.fail(std::string(s.key), "missing required field: expected " + std::string(s.expected));
      continue;
    }
    s.load(R, *it, std::string(s.key));
  }
  if (R.spec.seeds.empty()) R.spec.seeds.push_back(1);
  check_plan_size(R);
  return std::move(R.spec);
}

SweepSpec load_sweep_spec(const std::string& path) { return parse_sweep_spec(traces::read_text_file(path, core::limits::kMaxScenarioFileBytes), path); }

}  // namespace swarmlab::sweep
