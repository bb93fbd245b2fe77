#pragma once
// Strict JSON input with errors that name the file, the JSON path and what was expected: shared by
// the scenario loader and every other JSON input (sweep specs). Every problem is thrown as
// core::InputError(source, location, problem); the CLI turns it into exit code 2.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/input_error.h"
#include "core/input_limits.h"
#include "core/names.h"

namespace swarmlab::scenarios::json_input {

using json = nlohmann::json;

// Parses `text`: a syntax error is reported at "line L, column C", a duplicate field (which
// nlohmann's parser would silently merge) at its JSON path, non-UTF-8 text at its position.
json parse_strict(const std::string& text, const std::string& source);

// Names the input in errors; `fail` throws InputError(source, path or "top level", problem).
struct Reader {
  std::string source;
  [[noreturn]] void fail(const std::string& path, const std::string& problem) const;
};

// JSON paths: child("peers[1]", "name") == "peers[1].name", element("peers", 1) == "peers[1]".
std::string child(const std::string& parent, std::string_view key);
std::string element(const std::string& parent, std::size_t i);
// A JSON value as a message shows it after "got ".
std::string describe(const json& v);
// Printable ASCII only (for text taken from the input or the parser's messages).
std::string sanitize(std::string_view s);

// Rejects fields of object `v` not in `allowed`, suggesting the closest allowed name.
void check_fields(const Reader& L, const json& v, const std::string& path, std::string_view what,
                  const std::vector<std::string_view>& allowed);

// An object whose fields are checked against an allowed list.
class Fields {
 public:
  Fields(const Reader& L, const json& v, std::string path, std::string_view what,
         const std::vector<std::string_view>& allowed)
      : L_(L), v_(v), path_(std::move(path)) {
    if (!v.is_object()) L.fail(path_, "expected " + std::string(what) + ", got " + describe(v));
    check_fields(L, v, path_, what, allowed);
  }

  const json* find(std::string_view key) const {
    const auto it = v_.find(std::string(key));
    return it == v_.end() ? nullptr : &*it;
  }
  const json& require(std::string_view key, std::string_view expected) const {
    if (const json* v = find(key)) return *v;
    L_.fail(path(key), "missing required field: expected " + std::string(expected));
  }
  std::string path(std::string_view key) const { return child(path_, key); }
  const std::string& path() const { return path_; }

 private:
  const Reader& L_;
  const json& v_;
  std::string path_;
};

// Value readers: each checks the type and range and fails naming `path` and the expectation.
std::string get_string(const Reader& L, const json& v, const std::string& path, bool allow_empty = false);
bool get_bool(const Reader& L, const json& v, const std::string& path);
// A non-negative number in `unit`.
double get_non_negative(const Reader& L, const json& v, const std::string& path, std::string_view unit);
// `v` (in `unit`) within [min, max], the documented limits (core/input_limits.h); `why` says what
// the limit protects.
double check_range(const Reader& L, const std::string& path, double v, double min, double max, std::string_view unit,
                   std::string_view why);
// Bits/s: a number, or a string with a unit ("200 Mb/s"), from 1 kb/s to 10 Tb/s.
double get_bandwidth(const Reader& L, const json& v, const std::string& path);
// Seconds: a number in the field's own unit (`bare_unit_s` seconds, named `bare_unit_name`), or a
// string with a unit ("8h"); at most `max_s` seconds (default: the limit on any time, 10^8 s).
double get_duration(const Reader& L, const json& v, const std::string& path, double bare_unit_s,
                    std::string_view bare_unit_name, double max_s = core::limits::kMaxSeconds);
// An integer in [min, max]; integral floats such as 2.5e7 are accepted.
std::uint64_t get_uint(const Reader& L, const json& v, const std::string& path, std::uint64_t min,
                       std::uint64_t max, std::string_view what);

// One of the names in an enum's name table (core/names.h).
template <typename E, std::size_t N>
E get_enum(const Reader& L, const json& v, const std::string& path, const core::Named<E> (&choices)[N]) {
  if (v.is_string())
    if (const auto value = core::parse_name(choices, v.get_ref<const std::string&>())) return *value;
  std::string names;
  for (const auto& c : choices) names += (names.empty() ? "\"" : ", \"") + std::string(c.name) + "\"";
  L.fail(path, "expected one of " + names + ", got " + describe(v));
}

}  // namespace swarmlab::scenarios::json_input
