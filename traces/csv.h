#pragma once
// The plain CSV dialect both trace formats share (traces/README.md):
// - UTF-8 text; an optional byte-order mark; LF or CRLF line ends;
// - blank lines and lines whose first non-blank character is '#' are ignored;
// - the first other line is the header and must list exactly the expected columns;
// - cells are separated by ',' and trimmed of spaces and tabs; no quoting.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "traces/text.h"

namespace swarmlab::traces {

struct CsvRow {
  std::size_t line = 0;                 // 1-based line number in the file
  std::vector<std::string_view> cells;  // views into the text passed to read_csv
};

// Splits `text` into data rows, checking the header and each row's column count. Throws
// core::InputError(source, "line N", ...) on the first problem.
std::vector<CsvRow> read_csv(std::string_view text, const std::string& source,
                             const std::vector<std::string_view>& header);

// "line N", the location string every CSV error uses.
std::string line_location(std::size_t line);

// Cell parsers; on failure they throw core::InputError(source, "line N", ...) naming the column
// and what was expected.
double parse_time_cell(const CsvRow& row, std::size_t column, std::string_view name,
                       const std::string& source);
double parse_bps_cell(const CsvRow& row, std::size_t column, std::string_view name,
                      const std::string& source);
// A peer name; when `known` is not null the name must be one of them.
std::string parse_peer_cell(const CsvRow& row, std::size_t column, const std::string& source,
                            const PeerNames* known);

// Checks that a trace's rows come in non-decreasing time order (time in column time_s).
class TimeOrder {
 public:
  explicit TimeOrder(const std::string& source) : source_(source) {}
  // Throws core::InputError(source, "line N", ...) when `time_s` is earlier than the last row's.
  void check(double time_s, std::size_t line);

 private:
  const std::string& source_;
  double last_time_ = 0;
  std::size_t last_line_ = 0;
};

}  // namespace swarmlab::traces
