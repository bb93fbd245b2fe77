#pragma once
// Open MPI, when an MPI launcher started this process (mpirun, or srun with PMIx): MPI_Init then,
// and only then, so the same executable runs as a plain program too. Detection is by the
// environment the launchers set (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK) before MPI_Init.
#include <string>

namespace swarmlab::sweep {

enum class MpiMode { Auto, On, Off };

class MpiSession {
 public:
  // Whether this build has MPI support (Open MPI found at configure time).
  static bool compiled();
  // Whether the environment says an MPI launcher started this process with more than one rank.
  static bool launched();

  // Auto: MPI_Init when launched(); On: always (fails without MPI support); Off: never. Throws
  // std::runtime_error when MPI is required (On, or launched with several ranks) but not built in.
  explicit MpiSession(MpiMode mode);
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& host() const { return host_; }

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
  std::string host_;
};

}  // namespace swarmlab::sweep
