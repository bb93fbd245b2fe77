// Built instead of training_peer.cc when libtorch was not found (exec/CMakeLists.txt): the peer
// command then refuses --train with a clear error instead of training something else.
#include <stdexcept>

#include "exec/train/training_peer.h"

namespace swarmlab::exec {

int run_training_peer(const TrainingPeerConfig&, std::ostream&, std::ostream&) {
  throw std::invalid_argument(
      "--train: this swarmlab was built without libtorch (install Debian's libtorch-dev, e.g. with ./setup.sh, and rebuild)");
}

}  // namespace swarmlab::exec
