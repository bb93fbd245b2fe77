#include "sweep/csv.h"

#include "core/input_error.h"
#include "traces/text.h"

namespace swarmlab::sweep {

std::string csv_cell(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_cell(cells[i]);
  return out + "\n";
}

std::string csv_number(std::optional<double> v) { return v ? traces::format_real(*v) : std::string(); }

std::string csv_value(const nlohmann::json& v) {
  if (v.is_null()) return "none";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return traces::format_real(v.get<double>());
  return v.dump();
}

std::vector<std::vector<std::string>> read_csv_table(std::string_view text, const std::string& source) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  std::size_t line = 1, row_line = 1;
  bool quoted = false, any = false;
  const auto end_row = [&] {
    row.push_back(std::move(cell));
    cell.clear();
    if (!rows.empty() && row.size() != rows[0].size())
      throw core::InputError(source, "line " + std::to_string(row_line),
                             "expected " + std::to_string(rows[0].size()) + " cells as in the header, got " +
                                 std::to_string(row.size()));
    rows.push_back(std::move(row));
    row.clear();
    any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"' && cell.empty()) quoted = true, any = true;
    else if (c == ',') row.push_back(std::move(cell)), cell.clear(), any = true;
    else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    else if (c == '\n') {
      end_row();
      row_line = ++line;
    } else {
      cell += c;
      any = true;
    }
  }
  if (quoted) throw core::InputError(source, "line " + std::to_string(row_line), "expected a closing quote");
  if (any || !cell.empty()) end_row();
  return rows;
}

}  // namespace swarmlab::sweep
