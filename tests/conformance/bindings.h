#pragma once
// The factories binding_names() lists (one file each).
#include <memory>

#include "conformance/binding.h"

namespace swarmlab::conformance {

std::unique_ptr<BindingFactory> flow_binding();
std::unique_ptr<BindingFactory> latency_binding();
std::unique_ptr<BindingFactory> ns3_binding();
std::unique_ptr<BindingFactory> memory_binding();
std::unique_ptr<BindingFactory> live_binding();
std::unique_ptr<BindingFactory> relayed_binding();

}  // namespace swarmlab::conformance
