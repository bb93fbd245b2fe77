#include "bindings.h"

#include <map>
#include <stdexcept>

namespace swarmlab::conformance {
namespace {

const std::map<std::string, std::unique_ptr<BindingFactory>>& registry() {
  static const auto* factories = [] {
    auto* m = new std::map<std::string, std::unique_ptr<BindingFactory>>;
    for (auto make : {flow_binding, latency_binding, ns3_binding, memory_binding, live_binding, relayed_binding}) {
      auto f = make();
      const std::string name = f->name();
      m->emplace(name, std::move(f));
    }
    return m;
  }();
  return *factories;
}

}  // namespace

const std::vector<std::string>& binding_names() {
  static const std::vector<std::string> names = {"flow", "latency", "ns3", "memory", "live", "relayed"};
  return names;
}

const BindingFactory& binding(const std::string& name) {
  auto it = registry().find(name);
  if (it == registry().end()) throw std::invalid_argument("no binding named " + name);
  return *it->second;
}

}  // namespace swarmlab::conformance
