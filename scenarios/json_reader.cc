#include "scenarios/json_reader.h"

#include <cmath>
#include <set>
#include <vector>

#include "core/input_limits.h"
#include "traces/text.h"
#include "traces/units.h"

namespace swarmlab::scenarios::json_input {

void Reader::fail(const std::string& path, const std::string& problem) const {
  throw core::InputError(source, path.empty() ? "top level" : path, problem);
}

std::string child(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string element(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

// A JSON value as a message shows it after "got ".
std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + traces::quoted(v.get_ref<const std::string&>());
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return v.dump();
    default: return "an unsupported value";
  }
}

// Printable ASCII only (for text taken from the parser's own messages).
std::string sanitize(std::string_view s) {
  std::string q = traces::quoted(s, 400);
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    if (q[i] == '\\' && i + 2 < q.size() && (q[i + 1] == '"' || q[i + 1] == '\\')) ++i;
    out += q[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// An object whose fields are checked against an allowed list

// Rejects fields of object `v` not in `allowed`, suggesting the closest allowed name.
void check_fields(const Reader& L, const json& v, const std::string& path, std::string_view what,
                  const std::vector<std::string_view>& allowed) {
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (known) continue;
    std::string problem = "unknown field " + traces::quoted(key) + " in " + std::string(what);
    std::string_view best;
    std::size_t best_distance = 3;  // suggest only names at most 2 edits away
    for (auto a : allowed) {
      const std::size_t d = traces::edit_distance(key, a);
      if (d < best_distance) best = a, best_distance = d;
    }
    if (!best.empty()) problem += "; did you mean \"" + std::string(best) + "\"?";
    const std::set<std::string_view> sorted(allowed.begin(), allowed.end());
    problem += " (allowed fields: ";
    bool first = true;
    for (auto a : sorted) problem += (first ? "" : ", ") + std::string(a), first = false;
    L.fail(child(path, sanitize(key)), problem + ")");
  }
}



// ---------------------------------------------------------------------------------------------
// Value readers

std::string get_string(const Reader& L, const json& v, const std::string& path, bool allow_empty) {
  if (!v.is_string())
    L.fail(path,
           std::string("expected a ") + (allow_empty ? "" : "non-empty ") + "string, got " + describe(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() && !allow_empty) L.fail(path, "expected a non-empty string, got \"\"");
  return s;
}

bool get_bool(const Reader& L, const json& v, const std::string& path) {
  if (!v.is_boolean()) L.fail(path, "expected true or false, got " + describe(v));
  return v.get<bool>();
}

// A non-negative number in `unit`.
double get_non_negative(const Reader& L, const json& v, const std::string& path, std::string_view unit) {
  const std::string expected = "expected a non-negative number of " + std::string(unit);
  if (!v.is_number()) L.fail(path, expected + ", got " + describe(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) L.fail(path, expected + ", got " + v.dump());
  return d;
}

double check_range(const Reader& L, const std::string& path, double v, double min, double max, std::string_view unit,
                   std::string_view why) {
  if (v < min || v > max)
    L.fail(path, "expected " + std::string(v < min ? "at least " : "at most ") + traces::format_plain(v < min ? min : max) +
                     " " + std::string(unit) + " (" + std::string(why) + "), got " + traces::format_plain(v) + " " +
                     std::string(unit));
  return v;
}

double get_bandwidth(const Reader& L, const json& v, const std::string& path) {
  double bps = 0;
  if (v.is_string()) {
    bps = traces::parse_bandwidth(v.get_ref<const std::string&>(), L.source, path);
  } else {
    if (!v.is_number())
      L.fail(path, "expected a non-negative number of bits/s or a string with a unit (" +
                       std::string(traces::kBandwidthUnits) + ", e.g. \"200 Mb/s\"), got " + describe(v));
    bps = get_non_negative(L, v, path, "bits/s");
  }
  return check_range(L, path, bps, core::limits::kMinBandwidthBps, core::limits::kMaxBandwidthBps, "bits/s",
                     "a link slower than 1 kb/s is no link: use join_s/leave_s or a churn trace for a peer that is away; "
                     "10 Tb/s at most");
}

double get_duration(const Reader& L, const json& v, const std::string& path, double bare_unit_s,
                    std::string_view bare_unit_name, double max_s) {
  double s = 0;
  if (v.is_string()) {
    s = traces::parse_duration(v.get_ref<const std::string&>(), L.source, path, bare_unit_s);
  } else {
    if (!v.is_number())
      L.fail(path, "expected a non-negative number of " + std::string(bare_unit_name) +
                       " or a string with a unit (" + std::string(traces::kDurationUnits) +
                       ", e.g. \"8h\"), got " + describe(v));
    s = get_non_negative(L, v, path, bare_unit_name) * bare_unit_s;
  }
  return check_range(L, path, s, 0, max_s, "s",
                     max_s == core::limits::kMaxSeconds ? "the limit on any time or duration, about 3.2 years"
                                                        : "the limit on this field");
}

// An integer in [min, max]; integral floats such as 2.5e7 are accepted.
std::uint64_t get_uint(const Reader& L, const json& v, const std::string& path, std::uint64_t min,
                       std::uint64_t max, std::string_view what) {
  std::string expected = "expected " + std::string(what) + " (an integer";
  if (min == 0 && max == UINT64_MAX) {
    expected = "expected " + std::string(what) + " (a non-negative integer";
  } else {
    expected += " from " + std::to_string(min);
    expected += max < UINT64_MAX ? " to " + std::to_string(max) : std::string(" up");
  }
  expected += ")";
  std::uint64_t out = 0;
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < 0 || d >= 18446744073709551616.0)
      L.fail(path, expected + ", got " + v.dump());
    out = static_cast<std::uint64_t>(d);
  } else {
    L.fail(path, expected + ", got " + describe(v));  // negative integers land here too
  }
  if (out < min || out > max) L.fail(path, expected + ", got " + v.dump());
  return out;
}

namespace {

class SyntaxChecker final : public json::json_sax_t {
 public:
  SyntaxChecker(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return push(false); }
  bool start_array(std::size_t) override { return push(true); }
  bool end_object() override { return pop(); }
  bool end_array() override { return pop(); }
  bool key(string_t& key) override {
    Frame& f = stack_.back();
    if (!f.keys.insert(key).second)
      throw core::InputError(source_, path_to(sanitize(key)),
                             "duplicate field: expected each field once per object");
    f.key = key;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    // `position` counts the bytes read, the offending one included. A number out of range is
    // reported where it starts.
    std::size_t offset = position == 0 ? 0 : position - 1;
    if (e.id == 406 && last_token.size() <= position) offset = position - last_token.size();
    const auto [line, column] = traces::line_column(text_, offset);
    std::string what = e.what();
    const auto at = what.find(": ", what.find("parse error"));
    if (what.find("parse error") != std::string::npos && at != std::string::npos) {
      what = "expected valid JSON: " + what.substr(at + 2);
    } else {  // e.g. "number overflow parsing '1e400'"
      const auto bracket = what.find("] ");
      what = "expected valid JSON with numbers in range: " +
             (bracket == std::string::npos ? what : what.substr(bracket + 2));
    }
    throw core::InputError(source_, "line " + std::to_string(line) + ", column " + std::to_string(column),
                           sanitize(what));
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being read
    std::string key;        // objects: the field being read
    std::set<std::string> keys;
  };
  bool value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    return true;
  }
  bool push(bool array) {
    stack_.emplace_back();
    stack_.back().array = array;
    return true;
  }
  bool pop() {
    stack_.pop_back();
    return value();
  }
  std::string path_to(const std::string& new_key) const {
    std::string p;
    for (std::size_t i = 0; i < stack_.size(); ++i)
      p = stack_[i].array ? element(p, stack_[i].index)
                          : child(p, i + 1 == stack_.size() ? new_key : stack_[i].key);
    return p;
  }

  const std::string& text_;
  const std::string& source_;
  std::vector<Frame> stack_;
};

}  // namespace

json parse_strict(const std::string& text, const std::string& source) {
  traces::check_text(text, source);
  SyntaxChecker checker(text, source);
  json::sax_parse(text, &checker);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // not expected after the first pass
    throw core::InputError(source, "top level", "expected valid JSON: " + sanitize(e.what()));
  }
}

}  // namespace swarmlab::scenarios::json_input
