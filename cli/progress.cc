#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace swarmlab::cli {

Progress::Progress(std::string label, bool quiet) : label_(std::move(label)), enabled_(!quiet && isatty(STDERR_FILENO)) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void Progress::update(std::size_t done, std::size_t total, const std::string& note) {
  if (!enabled_ || total == 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu%s%s\033[K", label_.c_str(), filled, "##############################",
               kWidth - filled, "", done, total, note.empty() ? "" : " ", note.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace swarmlab::cli
