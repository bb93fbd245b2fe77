#pragma once
// The one translation between an enum and the words that name it (in scenarios, on the command
// line, in results). Each enum keeps a single table next to its definition; name_of and parse_name
// read that table, so a value cannot be spelt two ways.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swarmlab::core {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::string_view name_of(const Named<E> (&table)[N], E value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_name(const Named<E> (&table)[N], std::string_view text) {
  for (const auto& entry : table)
    if (entry.name == text) return entry.value;
  return std::nullopt;
}

// Every name in the table, in table order (for option checks and "expected one of" messages).
template <class E, std::size_t N>
std::vector<std::string> names_of(const Named<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

}  // namespace swarmlab::core
