// libFuzzer target for the trace parsers (tests/fuzz/run_fuzz.sh trace): any bytes given as a
// churn or bandwidth CSV either parse into a trace within the documented limits, which then round
// trips through to_csv exactly, or are refused with core::InputError. Nothing else escapes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/input_error.h"
#include "core/input_limits.h"
#include "traces/bandwidth_trace.h"
#include "traces/churn_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace swarmlab;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const traces::ChurnTrace t = traces::parse_churn_trace(text, "fuzz.csv");
    for (const auto& e : t.events)
      if (!(e.time_s >= 0 && e.time_s <= core::limits::kMaxSeconds)) std::abort();
    if (!(traces::parse_churn_trace(traces::to_csv(t), "again.csv") == t)) std::abort();
  } catch (const core::InputError&) {
  }
  try {
    const traces::BandwidthTrace t = traces::parse_bandwidth_trace(text, "fuzz.csv");
    for (const auto& e : t.events)
      if (!(e.upload_bps >= core::limits::kMinBandwidthBps && e.download_bps <= core::limits::kMaxBandwidthBps))
        std::abort();
    if (!(traces::parse_bandwidth_trace(traces::to_csv(t), "again.csv") == t)) std::abort();
  } catch (const core::InputError&) {
  }
  return 0;
}
