#include "sweep/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace swarmlab::sweep {

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

[[noreturn]] void io_error(const fs::path& p, const std::string& what) {
  throw std::runtime_error(p.string() + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

void write_atomic(const fs::path& path, const std::string& content) {
  // The temporary name is unique per process, so concurrent writers of one file never share it.
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_error(tmp, "cannot create");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      io_error(tmp, "cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) io_error(tmp, "cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) io_error(path, "cannot rename into place");
}

RunStore::RunStore(fs::path out, std::size_t runs) : out_(std::move(out)), width_(6) {
  for (std::size_t n = runs; n >= 1'000'000; n /= 10) ++width_;
  std::error_code ec;
  fs::create_directories(out_ / "runs", ec);
  if (ec) throw std::runtime_error((out_ / "runs").string() + ": cannot create the output folder: " + ec.message());
}

fs::path RunStore::result_path(std::size_t index) const {
  std::string n = std::to_string(index);
  if (n.size() < static_cast<std::size_t>(width_)) n.insert(0, static_cast<std::size_t>(width_) - n.size(), '0');
  return out_ / "runs" / (n + ".json");
}

void RunStore::write(const SweepSpec& spec, const RunResult& r) const { write_atomic(result_path(r.index), to_json_text(spec, r)); }

void RunStore::write_wall(std::size_t index, const WallRecord& w) const {
  fs::path p = result_path(index);
  p.replace_extension(".wall");
  std::ostringstream s;
  s.precision(6);
  s << std::fixed << w.wall_s << " " << w.where << "\n";
  write_atomic(p, s.str());
}

std::optional<RunResult> RunStore::read(const SweepSpec& spec, const RunDesc& run, const std::string& key) const {
  const std::string text = read_all(result_path(run.index));
  if (text.empty()) return std::nullopt;
  try {
    RunResult r = result_from_json(spec, text);
    if (r.key != key || r.index != run.index) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged file is run again
  }
}

std::optional<WallRecord> RunStore::read_wall(std::size_t index) const {
  fs::path p = result_path(index);
  p.replace_extension(".wall");
  std::istringstream s(read_all(p));
  WallRecord w;
  if (!(s >> w.wall_s)) return std::nullopt;
  std::getline(s >> std::ws, w.where);
  return w;
}

OutputLock::OutputLock(const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  const fs::path p = out / ".lock";
  fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) io_error(p, "cannot open the lock file");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw std::runtime_error(out.string() + ": another sweep is writing this folder (its lock " + p.string() +
                             " is held): wait for it, or choose another --out");
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace swarmlab::sweep
