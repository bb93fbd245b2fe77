#pragma once
// Who reduces which share of the vector in an averaging round (docs/dedloc.md §2, §4; Table 1's
// AR / PS / Ours):
// - AllReduce: butterfly all-reduce with equal shares among the peers that compute.
// - ParameterServer: one reachable peer reduces everything.
// - Planned: the LP planner's shares (core/planner).
// core/averaging/role_assignment.h turns a strategy into roles.
#include <string_view>

#include "core/names.h"

namespace swarmlab::core::averaging {

enum class Strategy { AllReduce, ParameterServer, Planned };

// Names in scenarios ("strategy") and on the command line.
inline constexpr Named<Strategy> kStrategyNames[] = {
    {Strategy::AllReduce, "ar"}, {Strategy::ParameterServer, "ps"}, {Strategy::Planned, "ours"}};
// Labels in reports, as DeDLOC's Table 1 prints them.
inline constexpr Named<Strategy> kStrategyLabels[] = {
    {Strategy::AllReduce, "AR"}, {Strategy::ParameterServer, "PS"}, {Strategy::Planned, "Ours"}};

inline std::string_view name(Strategy s) { return name_of(kStrategyNames, s); }
inline std::string_view label(Strategy s) { return name_of(kStrategyLabels, s); }

}  // namespace swarmlab::core::averaging
