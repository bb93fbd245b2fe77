// The `swarmlab` executable's libtorch processes (the training peer, the DMoE expert runtime and
// trainer): libtorch is not linked into it, because loading libtorch costs every invocation of
// every subcommand most of a second. `peer --train`, `dmoe-runtime` and `dmoe-trainer` therefore
// re-execute the same command line as `swarmlab-train`, the same program built with libtorch,
// found beside this executable (exec/CMakeLists.txt); so does `placement` (Hydra's policy, trained on
// libtorch). Without it (no libtorch at build time) the
// process says so and exits 2.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/dmoe/dmoe_process.h"
#include "exec/train/training_peer.h"
#include "learn/torch/torch_placement_policy.h"

namespace swarmlab::exec {

namespace {

[[noreturn]] void run_as_torch_binary(const std::string& what, std::ostream& out, std::ostream& log) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path trainer = self.parent_path() / "swarmlab-train";
  if (ec || !std::filesystem::exists(trainer))
    throw std::invalid_argument(what + ": this swarmlab was built without libtorch (no " + trainer.string() +
                                "; install Debian's libtorch-dev, e.g. with ./setup.sh, and rebuild)");
  // The command line as given, NUL-separated.
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t at = 0; at < cmdline.size();) {
    const std::size_t end = cmdline.find('\0', at);
    args.push_back(cmdline.substr(at, end - at));
    at = end == std::string::npos ? cmdline.size() : end + 1;
  }
  if (args.empty()) throw std::runtime_error(what + ": cannot read this process's command line");
  args[0] = trainer.string();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  out.flush();
  log.flush();
  execv(trainer.c_str(), argv.data());
  throw std::runtime_error(what + ": cannot execute " + trainer.string() + ": " + std::strerror(errno));
}

}  // namespace

int run_training_peer(const TrainingPeerConfig&, std::ostream& out, std::ostream& log) {
  run_as_torch_binary("--train", out, log);
}
int run_expert_runtime(const DmoeProcessConfig&, std::ostream& out, std::ostream& log) {
  run_as_torch_binary("dmoe-runtime", out, log);
}
int run_dmoe_trainer(const DmoeProcessConfig&, std::ostream& out, std::ostream& log) {
  run_as_torch_binary("dmoe-trainer", out, log);
}

}  // namespace swarmlab::exec

// `swarmlab placement` trains Hydra's distribution policy on libtorch.
namespace swarmlab::learn {

PolicyTrainingResult train_placement_policy(const std::vector<PlacementTask>&, const PolicyTrainingConfig&) {
  exec::run_as_torch_binary("placement", std::cout, std::cerr);
}

}  // namespace swarmlab::learn
