#include "exec/entropy.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace swarmlab::exec {

void fill_random(std::span<std::uint8_t> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    if (n > 0) got += static_cast<std::size_t>(n);
  }
}

std::uint64_t random_u64() {
  std::uint8_t b[8];
  fill_random(b);
  std::uint64_t v;
  std::memcpy(&v, b, 8);
  return v;
}

}  // namespace swarmlab::exec
