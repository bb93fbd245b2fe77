#include "cli/data_paths.h"

#include <filesystem>
#include <stdexcept>
#include <vector>

namespace swarmlab::cli {

std::string find_data_dir(const std::string& relative) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::current_path() / relative};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / relative);
#ifdef SWARMLAB_SOURCE_DIR
  candidates.push_back(fs::path(SWARMLAB_SOURCE_DIR) / relative);
#endif
  std::string tried;
  for (const auto& c : candidates) {
    if (fs::is_directory(c)) return c.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + c.string();
  }
  throw std::invalid_argument("cannot find the folder " + relative + " (looked in " + tried + ")");
}

}  // namespace swarmlab::cli
