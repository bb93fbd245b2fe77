#include "sweep/mpi_pool.h"

#include <sstream>
#include <stdexcept>
#include <chrono>
#include <thread>

#ifdef SWARMLAB_HAVE_MPI
#include <mpi.h>
#endif

namespace swarmlab::sweep {

#ifdef SWARMLAB_HAVE_MPI

namespace {

enum Tag : int { kReady = 1, kResult = 2, kWork = 3, kStop = 4 };

void send_text(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receive(const MPI_Status& probed) {
  int n = 0;
  MPI_Get_count(&probed, MPI_CHAR, &n);
  std::string text(static_cast<std::size_t>(n), '\0');
  MPI_Recv(text.data(), n, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

// "<index>\n<wall_s>\n<where>\n<json>"
std::string encode(const MpiResult& r) {
  std::ostringstream s;
  s.precision(17);
  s << r.index << "\n" << r.wall.wall_s << "\n" << r.wall.where << "\n" << r.json;
  return s.str();
}

MpiResult decode(const std::string& text) {
  MpiResult r;
  std::istringstream s(text);
  std::string line;
  std::getline(s, line);
  r.index = std::stoull(line);
  std::getline(s, line);
  r.wall.wall_s = std::stod(line);
  std::getline(s, r.wall.where);
  r.json.assign(std::istreambuf_iterator<char>(s), {});
  return r;
}

}  // namespace

void mpi_master(const MpiSession& mpi, const std::vector<std::size_t>& items, const std::vector<std::string>& keys,
                const std::function<void(const MpiResult&)>& on_result) {
  std::size_t next = 0;
  int active = mpi.size() - 1;
  while (active > 0) {
    int flag = 0;
    MPI_Status status;
    // Polls rather than blocks: Open MPI's blocking receive spins, and rank 0 would take a core
    // from the workers on a machine with as many ranks as cores.
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    const std::string text = receive(status);
    if (status.MPI_TAG == kResult) on_result(decode(text));
    if (next < items.size()) {
      const std::size_t item = items[next++];
      send_text(std::to_string(item) + " " + keys[item], status.MPI_SOURCE, kWork);
    } else {
      send_text("", status.MPI_SOURCE, kStop);
      --active;
    }
  }
}

void mpi_stop_workers(const MpiSession& mpi) {
  for (int r = 1; r < mpi.size(); ++r) send_text("", r, kStop);
}

void mpi_worker(const MpiSession&, const std::function<MpiResult(std::size_t, const std::string&)>& run) {
  send_text("", 0, kReady);
  while (true) {
    MPI_Status status;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    const std::string text = receive(status);
    if (status.MPI_TAG == kStop) return;
    std::istringstream s(text);
    std::size_t index = 0;
    std::string key;
    s >> index >> key;
    send_text(encode(run(index, key)), 0, kResult);
  }
}

#else

void mpi_master(const MpiSession&, const std::vector<std::size_t>&, const std::vector<std::string>&,
                const std::function<void(const MpiResult&)>&) {
  throw std::runtime_error("built without MPI support");
}
void mpi_stop_workers(const MpiSession&) {}
void mpi_worker(const MpiSession&, const std::function<MpiResult(std::size_t, const std::string&)>&) {
  throw std::runtime_error("built without MPI support");
}

#endif

}  // namespace swarmlab::sweep
