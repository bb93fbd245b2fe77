#pragma once
// The tidy tables' CSV (RFC 4180): cells that hold a comma, a quote or a line break are quoted,
// quotes doubled. Numbers are written in their shortest exact form, so a table is a pure function
// of the results it holds.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace swarmlab::sweep {

std::string csv_cell(std::string_view text);
std::string csv_line(const std::vector<std::string>& cells);
// A number as the table writes it ("" for none).
std::string csv_number(std::optional<double> v);
// An axis value: numbers as above, strings as they are, true/false, "none" for null.
std::string csv_value(const nlohmann::json& v);

// Parses CSV text into rows of cells (the header is row 0). Throws core::InputError(source,
// "line N", ...) on an unterminated quote or a row whose cell count differs from the header's.
std::vector<std::vector<std::string>> read_csv_table(std::string_view text, const std::string& source);

}  // namespace swarmlab::sweep
