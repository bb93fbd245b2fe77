#include "sweep/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "sweep/csv.h"
#include "sweep/stats.h"
#include "sweep/store.h"
#include "traces/text.h"

namespace swarmlab::sweep {

namespace {

using Key = std::vector<std::string>;

struct Side {
  const ResultTable* table;
  std::optional<std::pair<std::size_t, std::string>> filter;  // column, value
};

// metric value per (composition key, seed) of the rows that are ok.
std::map<Key, std::map<std::string, double>> collect(const Side& s, const std::vector<std::string>& key_axes,
                                                     const std::string& metric, std::vector<Key>& order) {
  const ResultTable& t = *s.table;
  std::vector<std::size_t> key_cols;
  for (const auto& a : key_axes) key_cols.push_back(t.column(a));
  const std::size_t seed = t.column("seed"), status = t.column("status"), value = t.column(metric);
  std::map<Key, std::map<std::string, double>> out;
  for (const auto& row : t.rows) {
    if (s.filter && row[s.filter->first] != s.filter->second) continue;
    Key k;
    for (auto c : key_cols) k.push_back(row[c]);
    auto [it, fresh] = out.try_emplace(k);
    if (fresh) order.push_back(k);
    if (row[status] != "ok" || row[value].empty()) continue;
    double v = 0;
    if (!traces::parse_real(row[value], v)) continue;
    if (!it->second.emplace(row[seed], v).second)
      throw core::InputError((std::filesystem::path(t.dir) / "results.csv").string(), "seed " + row[seed],
                             "expected one run per composition and seed, got two for the same values of " +
                                 [&] {
                                   std::string s;
                                   for (const auto& a : key_axes) s += (s.empty() ? "" : ", ") + a;
                                   return s.empty() ? std::string("(no axes)") : s;
                                 }() +
                                 ": an axis that varies is missing from the comparison");
  }
  return out;
}

Comparison build(const Side& base, const Side& cand, std::vector<std::string> key_axes, const std::string& metric,
                 bool higher_is_better) {
  Comparison c;
  c.metric = metric;
  c.higher_is_better = higher_is_better;
  c.key_axes = key_axes;
  std::vector<Key> order, unused;
  const auto a = collect(base, key_axes, metric, order);
  const auto b = collect(cand, key_axes, metric, unused);
  for (const Key& k : order) {
    const auto bit = b.find(k);
    CompositionChange ch;
    ch.values = k;
    std::vector<double> changes, xs, ys;
    if (bit != b.end())
      for (const auto& [seed, x] : a.at(k)) {
        const auto y = bit->second.find(seed);
        if (y == bit->second.end() || !(x != 0)) continue;
        xs.push_back(x);
        ys.push_back(y->second);
        changes.push_back(y->second / x - 1);
      }
    if (changes.empty()) {
      ++c.unpaired;
      continue;
    }
    const MeanCi m = mean_ci(changes);
    ch.pairs = m.n;
    ch.change = m.mean;
    ch.ci_low = m.low;
    ch.ci_high = m.high;
    ch.baseline_mean = mean_ci(xs).mean;
    ch.candidate_mean = mean_ci(ys).mean;
    ch.helps = higher_is_better ? ch.change > 0 : ch.change < 0;
    ch.significant = m.n >= 2 && (m.low > 0 || m.high < 0);
    c.rows.push_back(std::move(ch));
  }
  if (c.rows.empty()) return c;
  std::size_t helps = 0, sig_helps = 0, sig_hurts = 0;
  std::vector<double> all;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    helps += r.helps;
    sig_helps += r.significant && r.helps;
    sig_hurts += r.significant && !r.helps;
    all.push_back(r.change);
    const auto better = [&](double x, double y) { return higher_is_better ? x > y : x < y; };
    if (!c.worst || better(c.rows[*c.worst].change, r.change)) c.worst = i;
    if (!c.best || better(r.change, c.rows[*c.best].change)) c.best = i;
  }
  const double n = static_cast<double>(c.rows.size());
  c.share_helps = static_cast<double>(helps) / n;
  c.share_helps_significantly = static_cast<double>(sig_helps) / n;
  c.share_hurts_significantly = static_cast<double>(sig_hurts) / n;
  std::sort(all.begin(), all.end());
  c.median_change = all.size() % 2 ? all[all.size() / 2] : 0.5 * (all[all.size() / 2 - 1] + all[all.size() / 2]);
  return c;
}

std::pair<std::string, bool> choose_metric(const ResultTable& t, const std::string& wanted) {
  const std::string metric = wanted.empty() ? t.primary_metric : wanted;
  const auto hib = t.higher_is_better(metric);
  if (!hib) {
    std::string names;
    for (const auto& m : t.metrics) names += (names.empty() ? "" : ", ") + m.at("name").get<std::string>();
    throw std::invalid_argument("--metric: expected one of the sweep's metrics (" + names + "), got " + traces::quoted(metric));
  }
  return {metric, *hib};
}

std::string percent(double x) {
  if (!std::isfinite(x)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * x);
  return buf;
}

}  // namespace

Comparison compare_sweeps(const ResultTable& a, const ResultTable& b, const CompareOptions& o) {
  if (a.experiment != b.experiment)
    throw std::invalid_argument("expected two sweeps of the same experiment, got " + a.experiment + " (" + a.dir + ") and " +
                                b.experiment + " (" + b.dir + ")");
  const auto [metric, hib] = choose_metric(a, o.metric);
  std::vector<std::string> key_axes;
  for (const auto& x : a.axes)
    if (std::find(b.axes.begin(), b.axes.end(), x) != b.axes.end()) key_axes.push_back(x);
  Comparison c = build({&a, std::nullopt}, {&b, std::nullopt}, key_axes, metric, hib);
  c.baseline = a.name;
  c.candidate = b.name;
  return c;
}

Comparison compare_within(const ResultTable& t, const CompareOptions& o) {
  const auto [metric, hib] = choose_metric(t, o.metric);
  std::string axis = o.axis;
  if (axis.empty()) {
    if (std::find(t.axes.begin(), t.axes.end(), "strategy") != t.axes.end()) axis = "strategy";
    else throw std::invalid_argument("expected --axis (the sweep has no axis named \"strategy\"; its axes: " + [&] {
      std::string s;
      for (const auto& x : t.axes) s += (s.empty() ? "" : ", ") + x;
      return s;
    }() + ")");
  }
  if (std::find(t.axes.begin(), t.axes.end(), axis) == t.axes.end())
    throw std::invalid_argument("--axis: expected one of the sweep's axes, got " + traces::quoted(axis));
  const std::size_t col = t.column(axis);
  std::vector<std::string> levels;
  for (const auto& row : t.rows)
    if (std::find(levels.begin(), levels.end(), row[col]) == levels.end()) levels.push_back(row[col]);
  const auto pick = [&](const std::string& given, std::size_t index, const char* what) {
    if (!given.empty()) {
      if (std::find(levels.begin(), levels.end(), given) == levels.end())
        throw std::invalid_argument(std::string(what) + ": expected a value axis " + axis + " takes in the table, got " +
                                    traces::quoted(given));
      return given;
    }
    if (levels.size() <= index)
      throw std::invalid_argument("axis " + axis + " takes " + std::to_string(levels.size()) +
                                  " value(s) in the table: expected two to compare");
    return levels[index];
  };
  const std::string base = pick(o.baseline, 0, "--baseline");
  std::string cand = o.candidate;
  if (cand.empty())
    for (const auto& l : levels)
      if (l != base) {
        cand = l;
        break;
      }
  cand = pick(cand, 1, "--candidate");
  std::vector<std::string> key_axes;
  for (const auto& x : t.axes)
    if (x != axis) key_axes.push_back(x);
  Comparison c = build({&t, std::pair{col, base}}, {&t, std::pair{col, cand}}, key_axes, metric, hib);
  c.baseline = axis + "=" + base;
  c.candidate = axis + "=" + cand;
  return c;
}

void write_comparison(const Comparison& c, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> header = c.key_axes;
  for (const char* h : {"pairs", "baseline_mean", "candidate_mean", "change", "ci_low", "ci_high", "helps", "significant"})
    header.emplace_back(h);
  std::string csv = csv_line(header);
  const auto num = [](double x) { return std::isfinite(x) ? csv_number(x) : std::string(); };
  for (const auto& r : c.rows) {
    std::vector<std::string> row = r.values;
    row.push_back(std::to_string(r.pairs));
    for (double x : {r.baseline_mean, r.candidate_mean, r.change, r.ci_low, r.ci_high}) row.push_back(num(x));
    row.emplace_back(r.helps ? "true" : "false");
    row.emplace_back(r.significant ? "true" : "false");
    csv += csv_line(row);
  }
  write_atomic(std::filesystem::path(dir) / "compare.csv", csv);

  nlohmann::ordered_json j;
  j["metric"] = c.metric;
  j["higher_is_better"] = c.higher_is_better;
  j["baseline"] = c.baseline;
  j["candidate"] = c.candidate;
  j["key_axes"] = c.key_axes;
  j["compositions"] = c.rows.size();
  j["unpaired"] = c.unpaired;
  j["share_helps"] = c.share_helps;
  j["share_helps_significantly"] = c.share_helps_significantly;
  j["share_hurts_significantly"] = c.share_hurts_significantly;
  j["median_change"] = c.median_change;
  const auto row_json = [&](std::size_t i) {
    const auto& r = c.rows[i];
    nlohmann::ordered_json x;
    for (std::size_t k = 0; k < c.key_axes.size(); ++k) x["axes"][c.key_axes[k]] = r.values[k];
    x["change"] = r.change;
    x["ci_low"] = std::isfinite(r.ci_low) ? nlohmann::ordered_json(r.ci_low) : nlohmann::ordered_json(nullptr);
    x["ci_high"] = std::isfinite(r.ci_high) ? nlohmann::ordered_json(r.ci_high) : nlohmann::ordered_json(nullptr);
    x["pairs"] = r.pairs;
    return x;
  };
  if (c.worst) j["worst"] = row_json(*c.worst);
  if (c.best) j["best"] = row_json(*c.best);
  write_atomic(std::filesystem::path(dir) / "compare.json", j.dump(2) + "\n");
}

std::string describe(const Comparison& c) {
  std::string s = "compare " + c.metric + " (" + (c.higher_is_better ? "higher" : "lower") + " is better): " + c.candidate +
                  " against " + c.baseline + ", " + std::to_string(c.rows.size()) + " compositions";
  if (c.unpaired) s += " (" + std::to_string(c.unpaired) + " more without a pair of ok runs)";
  s += "\n";
  if (c.rows.empty()) return s + "no composition has a pair of ok runs to compare\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "helps in %.1f%% of compositions (significantly in %.1f%%; significantly hurts in %.1f%%)\n",
                100 * c.share_helps, 100 * c.share_helps_significantly, 100 * c.share_hurts_significantly);
  s += buf;
  s += "median change " + percent(c.median_change) + "\n";
  const auto line = [&](const char* what, std::size_t i) {
    const auto& r = c.rows[i];
    std::string axes;
    for (std::size_t k = 0; k < c.key_axes.size(); ++k) axes += (k ? ", " : "") + c.key_axes[k] + "=" + r.values[k];
    return std::string(what) + percent(r.change) + " [95% CI " + percent(r.ci_low) + " .. " + percent(r.ci_high) + ", " +
           std::to_string(r.pairs) + " seeds] at " + axes + "\n";
  };
  s += line("worst case ", *c.worst);
  s += line("best case  ", *c.best);
  return s;
}

}  // namespace swarmlab::sweep
