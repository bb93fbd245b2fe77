#pragma once
// Small text utilities shared by the trace and scenario loaders: reading a whole file, checking
// that input is text, locating a byte offset, strict number parsing and peer-name rules. Every
// failure is reported as core::InputError naming the file, the place and what was expected.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace swarmlab::traces {

// Peer names known to a scenario, sorted (so messages that list them are deterministic) and
// searchable by string_view.
using PeerNames = std::set<std::string, std::less<>>;

// Reads the whole file at `path`, which must be a regular file of at most `max_bytes` bytes. Throws
// core::InputError(path, "", ...) when it is missing, is a directory, a device, a FIFO or a socket
// (which could be endless or block forever), is larger than `max_bytes`, or cannot be read. At
// most max_bytes + 1 bytes are ever read, even from a file that grows meanwhile.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes);

// `s` in double quotes for an error message: bytes outside printable ASCII become \xNN, quotes
// and backslashes are escaped, and anything beyond `max_chars` is cut and marked with "...".
std::string quoted(std::string_view s, std::size_t max_chars = 60);

// Throws core::InputError(source, "line L, column C", ...) at the first byte that keeps `text`
// from being UTF-8 text: an ill-formed UTF-8 sequence, a NUL or another control character other
// than tab, CR and LF. Catches binary files before any parser sees them.
void check_text(std::string_view text, const std::string& source);

// 1-based line and column (in bytes) of byte `offset` in `text` (clamped to the end).
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset);

// Parses all of `s` as a decimal or scientific number ("12", "-0.5", "2.5e9"). Fails on empty
// input, leading '+', spaces, hex and trailing junk ("12abc"). "nan" and "inf" parse (callers
// reject them with a message of their own); values out of double range fail.
bool parse_real(std::string_view s, double& out);

// Formats `v` so that parse_real gives back exactly `v` (shortest round-trip form).
std::string format_real(double v);

// `v` for a message: integers below 10^15 in plain digits ("100000000"), others as format_real.
std::string format_plain(double v);

// Peer names: 1 to 128 characters from [A-Za-z0-9._-], not "." or "..". They appear in CSV
// traces, file names, output paths and on the terminal, so commas, spaces, quotes, slashes and
// control characters are excluded, and a name is never a path component that leaves its folder.
// Every name that reaches the filesystem or the terminal (scenario and model names too) follows
// this rule.
bool is_valid_peer_name(std::string_view name);
inline constexpr std::string_view kPeerNameRule = "1 to 128 characters from A-Z a-z 0-9 . _ -, not \".\" or \"..\"";

// "a, b, c" from the first `max_names` names, then "... (N in all)".
std::string list_names(const PeerNames& names, std::size_t max_names = 8);

// The name in `names` closest to `s` by edit distance, if one is at most `max_distance` away
// (ties: the first in order); "" otherwise. Used for "did you mean" hints.
std::string closest_name(std::string_view s, const PeerNames& names, std::size_t max_distance = 2);

// Edit distance, used to suggest the intended name when a field or peer name has a typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace swarmlab::traces
