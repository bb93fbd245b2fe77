#pragma once
// A digest as lowercase hex, to compare against published test vectors.
#include <cstdint>
#include <string>

namespace swarmlab::core::dht::testing {

template <class Digest>
std::string hex(const Digest& d) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : d) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace swarmlab::core::dht::testing
