#include "sweep/result_table.h"

#include <filesystem>

#include "core/input_error.h"
#include "core/input_limits.h"
#include "scenarios/json_reader.h"
#include "sweep/csv.h"
#include "traces/text.h"

namespace swarmlab::sweep {

std::size_t ResultTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  std::string all;
  for (const auto& h : header) all += (all.empty() ? "" : ", ") + h;
  throw core::InputError((std::filesystem::path(dir) / "results.csv").string(), "line 1",
                         "expected a column " + traces::quoted(name) + " (columns: " + all + ")");
}

bool ResultTable::has_column(const std::string& name) const {
  for (const auto& h : header)
    if (h == name) return true;
  return false;
}

std::optional<bool> ResultTable::higher_is_better(const std::string& name) const {
  for (const auto& m : metrics)
    if (m.at("name") == name) return m.at("higher_is_better").get<bool>();
  return std::nullopt;
}

ResultTable load_result_table(const std::string& dir) {
  namespace fs = std::filesystem;
  ResultTable t;
  t.dir = dir;
  const std::string meta_path = (fs::path(dir) / "sweep.json").string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw core::InputError(dir, "", "expected a sweep's output folder (with sweep.json and results.csv), got no such folder");
  const nlohmann::json meta = scenarios::json_input::parse_strict(traces::read_text_file(meta_path, core::limits::kMaxScenarioFileBytes), meta_path);
  try {
    t.name = meta.at("name").get<std::string>();
    t.experiment = meta.at("experiment").get<std::string>();
    for (const auto& a : meta.at("axes")) {
      t.axes.push_back(a.at("name").get<std::string>());
      if (a.at("kind") == "numeric") t.numeric_axes.push_back(t.axes.back());
    }
    t.metrics = meta.at("metrics");
    t.primary_metric = meta.at("primary_metric").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(meta_path, "top level",
                           "expected the sweep.json that swarmlab sweep writes (name, experiment, axes, metrics): " +
                               std::string(e.what()));
  }
  const std::string csv_path = (fs::path(dir) / "results.csv").string();
  auto rows = read_csv_table(traces::read_text_file(csv_path, core::limits::kMaxSweepTableBytes), csv_path);
  if (rows.empty()) throw core::InputError(csv_path, "line 1", "expected a header row, got an empty file");
  t.header = std::move(rows[0]);
  t.rows.assign(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()));
  for (const auto& a : t.axes) t.column(a);
  t.column("seed");
  t.column("status");
  return t;
}

}  // namespace swarmlab::sweep
