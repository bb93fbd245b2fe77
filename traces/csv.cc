#include "traces/csv.h"

#include <algorithm>
#include <cmath>

#include "core/input_error.h"
#include "core/input_limits.h"

namespace swarmlab::traces {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

// At most `max_cells` cells; a line with more gives max_cells + 1 (the caller reports the count).
std::vector<std::string_view> split(std::string_view line, std::size_t max_cells) {
  std::vector<std::string_view> cells;
  std::size_t start = 0;
  while (cells.size() <= max_cells) {
    const auto comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace

std::string line_location(std::size_t line) { return "line " + std::to_string(line); }

std::vector<CsvRow> read_csv(std::string_view text, const std::string& source,
                             const std::vector<std::string_view>& header) {
  check_text(text, source);
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const std::string expected_header = join(header);
  std::vector<CsvRow> rows;
  bool header_seen = false;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
    pos = nl == text.npos ? text.size() : nl + 1;
    ++line_no;
    if (line.ends_with('\r')) line.remove_suffix(1);
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    auto cells = split(line, header.size());
    if (!header_seen) {
      if (cells != header)
        throw core::InputError(source, line_location(line_no),
                               "expected the header " + quoted(expected_header) + ", got " + quoted(content));
      header_seen = true;
      continue;
    }
    if (cells.size() != header.size())
      throw core::InputError(source, line_location(line_no),
                             "expected " + std::to_string(header.size()) + " comma-separated columns (" +
                                 expected_header + "), got " +
                                 std::to_string(std::count(line.begin(), line.end(), ',') + 1) + ": " +
                                 quoted(content));
    if (rows.size() == core::limits::kMaxTraceRows)
      throw core::InputError(source, line_location(line_no),
                             "too many rows: expected at most " + std::to_string(core::limits::kMaxTraceRows) +
                                 " data rows in a trace");
    rows.push_back({line_no, std::move(cells)});
  }
  if (!header_seen)
    throw core::InputError(source, line_location(line_no + 1),
                           "unexpected end of file: expected the header " + quoted(expected_header) +
                               " (the file has no header line)");
  return rows;
}

namespace {

// A number in [min, max]; `expected` describes the range.
double parse_number_cell(const CsvRow& row, std::size_t column, std::string_view name,
                         std::string_view expected, double min, double max, const std::string& source) {
  const std::string_view cell = row.cells[column];
  double v = 0;
  if (!parse_real(cell, v))
    throw core::InputError(source, line_location(row.line),
                           "column " + std::string(name) + ": expected " + std::string(expected) + ", got " +
                               (cell.empty() ? std::string("an empty cell") : quoted(cell)));
  if (!std::isfinite(v) || v < min || v > max)
    throw core::InputError(
        source, line_location(row.line),
        "column " + std::string(name) + ": expected " + std::string(expected) + ", got " + std::string(cell));
  return v;
}

}  // namespace

double parse_time_cell(const CsvRow& row, std::size_t column, std::string_view name,
                       const std::string& source) {
  return parse_number_cell(row, column, name, "a number of seconds from 0 to " + format_plain(core::limits::kMaxSeconds), 0,
                           core::limits::kMaxSeconds, source);
}

double parse_bps_cell(const CsvRow& row, std::size_t column, std::string_view name,
                      const std::string& source) {
  return parse_number_cell(row, column, name,
                           "a number of bits/s from " + format_plain(core::limits::kMinBandwidthBps) + " to " +
                               format_plain(core::limits::kMaxBandwidthBps),
                           core::limits::kMinBandwidthBps, core::limits::kMaxBandwidthBps, source);
}

std::string parse_peer_cell(const CsvRow& row, std::size_t column, const std::string& source,
                            const PeerNames* known) {
  const std::string_view cell = row.cells[column];
  if (!is_valid_peer_name(cell))
    throw core::InputError(source, line_location(row.line),
                           "column peer: expected a peer name (" + std::string(kPeerNameRule) + "), got " +
                               (cell.empty() ? std::string("an empty cell") : quoted(cell)));
  if (known && !known->contains(cell)) {
    std::string problem = "column peer: unknown peer " + quoted(cell) +
                          ": expected one of the scenario's peers (" + list_names(*known) + ")";
    if (const auto hint = closest_name(cell, *known); !hint.empty())
      problem += "; did you mean " + quoted(hint) + "?";
    throw core::InputError(source, line_location(row.line), problem);
  }
  return std::string(cell);
}

void TimeOrder::check(double time_s, std::size_t line) {
  if (last_line_ && time_s < last_time_)
    throw core::InputError(source_, line_location(line),
                           "column time_s: expected times in non-decreasing order, got " + format_real(time_s) +
                               " after " + format_real(last_time_) + " on line " + std::to_string(last_line_) +
                               " (sort the trace by time)");
  last_time_ = time_s;
  last_line_ = line;
}

}  // namespace swarmlab::traces
