#pragma once
// On/off churn: every listed peer alternates `on_s` seconds up and `off_s` seconds down, all in
// step (the DeDLOC "time-varying" setup: part-time workers all alternating 8 h on, 8 h off).
#include <cstddef>
#include <string>
#include <vector>

#include "core/input_limits.h"
#include "traces/churn_trace.h"

namespace swarmlab::traces {

// Builds the trace over [0, duration_s). The cycle is `on_s` up then `off_s` down when
// `start_up`, or `off_s` down then `on_s` up otherwise; `phase_s` says how far into that cycle
// time 0 falls (any real number; it is taken modulo the period). Every peer gets an event at
// time 0 with its initial state, then one at each transition strictly before `duration_s`.
// Events are ordered by time, then by the order of `peers`.
//
// Throws std::invalid_argument when a duration is not finite, on_s, off_s or duration_s is not
// positive, `peers` is empty, a name is invalid (traces/text.h) or repeated, or the trace would
// hold more than kMaxOnOffEvents events.
ChurnTrace make_on_off(const std::vector<std::string>& peers, double on_s, double off_s, double duration_s,
                       bool start_up = true, double phase_s = 0);

// No more rows than a trace file may hold (core/input_limits.h), so every generated trace loads.
inline constexpr std::size_t kMaxOnOffEvents = core::limits::kMaxTraceRows;

}  // namespace swarmlab::traces
