#include "traces/text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "core/input_error.h"

namespace swarmlab::traces {

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    throw core::InputError(path, "", "cannot open file: it does not exist (expected a readable file)");
  if (fs::is_directory(status))
    throw core::InputError(path, "", "cannot open file: it is a directory (expected a readable file)");
  if (!fs::is_regular_file(status)) {
    const char* kind = fs::is_fifo(status)              ? "a FIFO"
                       : fs::is_character_file(status) ? "a character device"
                       : fs::is_block_file(status)     ? "a block device"
                       : fs::is_socket(status)         ? "a socket"
                                                       : "not a regular file";
    throw core::InputError(path, "", std::string("cannot read it: it is ") + kind + " (expected a regular file)");
  }
  const auto limit_text = [&] { return std::to_string(max_bytes >> 20) + " MiB (" + std::to_string(max_bytes) + " bytes)"; };
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw core::InputError(path, "", "file of " + std::to_string(size) + " bytes: expected at most " + limit_text());
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw core::InputError(
        path, "", std::string("cannot open file: ") + std::strerror(errno) + " (expected a readable file)");
  std::string text;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)  // grew since the size check
      throw core::InputError(path, "", "file of more than " + std::to_string(max_bytes) + " bytes: expected at most " + limit_text());
  }
  if (in.bad()) throw core::InputError(path, "", "read error (expected a readable file)");
  return text;
}

std::string quoted(std::string_view s, std::size_t max_chars) {
  std::string out = "\"";
  std::size_t shown = 0;
  for (const char ch : s) {
    if (shown == max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
    ++shown;
  }
  out += '"';
  return out;
}

std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, offset - line_start + 1};
}

namespace {

// Length of the well-formed UTF-8 sequence starting at `i`, or 0 (Unicode Table 3-7).
std::size_t utf8_sequence(std::string_view t, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(t[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > t.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

void check_text(std::string_view text, const std::string& source) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      const auto [line, column] = line_column(text, i);
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "expected UTF-8 text, found control byte 0x%02X (is this a binary file?)", c);
      throw core::InputError(source, "line " + std::to_string(line) + ", column " + std::to_string(column),
                             buf);
    }
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) {
      const auto [line, column] = line_column(text, i);
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "expected UTF-8 text, found the invalid byte 0x%02X (is this a binary file?)", c);
      throw core::InputError(source, "line " + std::to_string(line) + ", column " + std::to_string(column),
                             buf);
    }
    i += n;
  }
}

bool parse_real(std::string_view s, double& out) {
  if (s.empty()) return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out = v;
  return true;
}

std::string format_real(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

std::string format_plain(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return format_real(v);
}

bool is_valid_peer_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
  });
}

std::string list_names(const PeerNames& names, std::size_t max_names) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& n : names) {
    if (shown == max_names) {
      out += ", ... (" + std::to_string(names.size()) + " in all)";
      break;
    }
    if (shown) out += ", ";
    out += n;
    ++shown;
  }
  return out;
}

std::string closest_name(std::string_view s, const PeerNames& names, std::size_t max_distance) {
  std::string best;
  std::size_t best_distance = max_distance + 1;
  for (const auto& n : names) {
    const std::size_t d = edit_distance(s, n);
    if (d < best_distance) best = n, best_distance = d;
  }
  return best;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace swarmlab::traces
