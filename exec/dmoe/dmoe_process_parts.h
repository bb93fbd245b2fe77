#pragma once
// What the two DMoE processes (exec/dmoe/dmoe_process.h) share: the SIGTERM that asks them to
// leave, and the torch device from their command line.
#include <csignal>
#include <stdexcept>
#include <string>

#include "core/names.h"
#include "learn/torch/torch_dmoe.h"

namespace swarmlab::exec {

inline volatile std::sig_atomic_t g_dmoe_leave_requested = 0;
extern "C" inline void request_dmoe_leave(int) { g_dmoe_leave_requested = 1; }
inline bool leave_requested() { return g_dmoe_leave_requested != 0; }

inline learn::Device torch_device(const std::string& name) {
  if (const auto d = core::parse_name(learn::kDeviceNames, name)) return *d;
  throw std::invalid_argument("--device: expected auto, cpu or cuda, got \"" + name + "\"");
}

}  // namespace swarmlab::exec
