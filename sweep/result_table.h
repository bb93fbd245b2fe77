#pragma once
// A finished sweep read back from its folder (sweep.json and results.csv, sweep/table.h), for
// comparisons. Errors name the file and what was expected (core::InputError, exit code 2).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace swarmlab::sweep {

struct ResultTable {
  std::string dir;
  std::string name;
  std::string experiment;              // "averaging" or "training"
  std::vector<std::string> axes;       // axis column names, in spec order
  std::vector<std::string> numeric_axes;
  nlohmann::json metrics;              // [{name, higher_is_better, meaning}]
  std::string primary_metric;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // data rows

  // Index of column `name`; throws core::InputError naming results.csv when absent.
  std::size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
  // Whether `name` is a metric, and which way is better.
  std::optional<bool> higher_is_better(const std::string& name) const;
};

ResultTable load_result_table(const std::string& dir);

}  // namespace swarmlab::sweep
