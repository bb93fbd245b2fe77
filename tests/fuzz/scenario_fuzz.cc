// libFuzzer target for the scenario loaders (tests/fuzz/run_fuzz.sh scenario): any bytes given as a
// scenario file, a collaboration or a live DMoE run (scenarios/dmoe_live.h), either load into a
// scenario within the documented limits (core/input_limits.h) or are refused with core::InputError; nothing else escapes, nothing crashes, and no input makes the
// loader allocate past libFuzzer's RSS limit. Seeds: the shipped scenarios and the hostile corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/input_error.h"
#include "core/input_limits.h"
#include "scenarios/dmoe_live.h"
#include "scenarios/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace swarmlab;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (scenarios::is_dmoe_live(text)) {
      const scenarios::DmoeLiveScenario d = scenarios::load_dmoe_live(text, "fuzz.json");
      if (d.runtimes < d.layers || d.peers() > 128 || !(d.announce_period_s < d.alive_for_s)) std::abort();
      return 0;
    }
    // A source in a folder that does not exist: trace paths in the input resolve to nothing.
    const scenarios::Scenario sc = scenarios::parse_scenario(text, "/nonexistent-fuzz-dir/fuzz.json");
    if (sc.peers.size() > core::limits::kMaxPeers || sc.pair_caps.size() > core::limits::kMaxPairCaps) std::abort();
    if (!sc.dht && (sc.workload.parameters < 1 || sc.workload.parameters > core::limits::kMaxParameters)) std::abort();
    for (const auto& p : sc.peers)
      if (!(p.upload_bps >= core::limits::kMinBandwidthBps && p.download_bps <= core::limits::kMaxBandwidthBps))
        std::abort();
  } catch (const core::InputError&) {
  }
  return 0;
}
