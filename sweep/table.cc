#include "sweep/table.h"

#include "sweep/columns.h"
#include "sweep/csv.h"

namespace swarmlab::sweep {

bool is_numeric_axis(const Axis& a) {
  if (a.lo) return true;
  for (const auto& v : a.values)
    if (!v.is_number()) return false;
  return true;
}

TableCounts write_tables(const SweepSpec& spec, const SweepPlan& plan, const std::vector<std::optional<RunResult>>& results,
                         const RunStore& store, bool with_wall_time) {
  const auto metrics = metrics_of(spec.experiment.run);
  std::vector<std::string> header;
  for (auto c : kLeadingColumns) header.emplace_back(c);
  for (const auto& a : spec.axes) header.push_back(a.name);
  for (auto c : kDerivedColumns) header.emplace_back(c);
  for (const auto& m : metrics) header.emplace_back(m.name);
  header.emplace_back(kErrorColumn);
  if (with_wall_time) header.emplace_back(kWallColumn);

  TableCounts counts;
  counts.runs = plan.runs.size();
  std::string table = csv_line(header);
  std::string walls = csv_line({"run", "wall_s", "where"});
  for (const auto& run : plan.runs) {
    const auto& r = results[run.index];
    if (!r) continue;
    ++counts.done;
    (r->status == Status::Ok ? counts.ok : counts.failed)++;
    std::vector<std::string> row = {std::to_string(run.index), std::to_string(run.composition), std::to_string(run.seed)};
    for (const auto& v : run.values) row.push_back(csv_value(v));
    row.push_back(r->peers ? std::to_string(*r->peers) : "");
    row.push_back(r->client_peers ? std::to_string(*r->client_peers) : "");
    row.emplace_back(core::name_of(kStatusNames, r->status));
    for (std::size_t m = 0; m < metrics.size(); ++m)
      row.push_back(m < r->metrics.size() ? csv_number(r->metrics[m].second) : "");
    row.push_back(r->error);
    const auto wall = store.read_wall(run.index);
    if (with_wall_time) row.push_back(wall ? csv_number(wall->wall_s) : "");
    table += csv_line(row);
    if (wall) walls += csv_line({std::to_string(run.index), csv_number(wall->wall_s), wall->where});
  }
  write_atomic(store.out() / "results.csv", table);
  write_atomic(store.out() / "runs_wall.csv", walls);

  nlohmann::ordered_json meta;
  meta["name"] = spec.name;
  meta["description"] = spec.description;
  meta["experiment"] = std::string(core::name_of(kExperimentNames, spec.experiment.run));
  meta["backend"] = spec.experiment.backend;
  if (spec.experiment.rounds) meta["rounds"] = *spec.experiment.rounds;
  if (spec.experiment.duration_s) meta["duration_s"] = *spec.experiment.duration_s;
  meta["sampling"] = {{"method", std::string(core::name_of(kMethodNames, spec.sampling.method))},
                      {"count", spec.sampling.count ? nlohmann::ordered_json(*spec.sampling.count) : nlohmann::ordered_json(nullptr)},
                      {"seed", spec.sampling.seed}};
  meta["seeds"] = spec.seeds;
  meta["axes"] = nlohmann::ordered_json::array();
  for (const auto& a : spec.axes) {
    nlohmann::ordered_json x;
    x["name"] = a.name;
    x["set"] = std::string(core::name_of(kTargetNames, a.target));
    x["groups"] = a.groups;
    x["kind"] = is_numeric_axis(a) ? "numeric" : "categorical";
    x["log_scale"] = a.log_scale;
    x["crossed"] = a.crossed;
    meta["axes"].push_back(x);
  }
  meta["metrics"] = nlohmann::ordered_json::array();
  for (const auto& m : metrics)
    meta["metrics"].push_back({{"name", m.name}, {"higher_is_better", m.higher_is_better}, {"meaning", m.meaning}});
  meta["primary_metric"] = primary_metric(spec.experiment.run).name;
  meta["runs"] = counts.runs;
  meta["compositions"] = plan.compositions;
  meta["done"] = counts.done;
  meta["ok"] = counts.ok;
  meta["failed"] = counts.failed;
  write_atomic(store.out() / "sweep.json", meta.dump(2) + "\n");
  return counts;
}

}  // namespace swarmlab::sweep
