#include "sweep/mpi_session.h"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#ifdef SWARMLAB_HAVE_MPI
#include <mpi.h>
#endif

namespace swarmlab::sweep {

bool MpiSession::compiled() {
#ifdef SWARMLAB_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool MpiSession::launched() {
  if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE")) return std::atoi(n) > 1;
  for (const char* var : {"PMIX_RANK", "PMI_RANK"})
    if (std::getenv(var)) {
      // srun sets SLURM_NTASKS; a single task is an ordinary run.
      if (const char* n = std::getenv("SLURM_NTASKS")) return std::atoi(n) > 1;
      return true;
    }
  return false;
}

MpiSession::MpiSession(MpiMode mode) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  host_ = name;
  const bool want = mode == MpiMode::On || (mode == MpiMode::Auto && launched());
  if (!want) return;
#ifdef SWARMLAB_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  active_ = true;
#else
  throw std::runtime_error(
      "this process was started by an MPI launcher (or --mpi on was given), but this swarmlab was built without "
      "MPI support: install Open MPI (libopenmpi-dev, see setup.sh) and rebuild, or run without mpirun");
#endif
}

MpiSession::~MpiSession() {
#ifdef SWARMLAB_HAVE_MPI
  if (active_) MPI_Finalize();
#endif
}

}  // namespace swarmlab::sweep
