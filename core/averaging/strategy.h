#pragma once
// How a round averages (docs/dedloc.md §2, §4: Table 1's AR / PS / Ours; docs/hydra.md §5: HD):
// - AllReduce: butterfly all-reduce with equal shares among the peers that compute.
// - ParameterServer: one reachable peer reduces everything.
// - Planned: the LP planner's shares (core/planner).
// - HalvingDoubling: Hydra's recursive halving-doubling all-reduce among the peers that compute
//   (core/allreduce/halving_doubling_averager.h), each its own replica group of one.
// core/averaging/role_assignment.h turns a strategy into roles.
#include <string_view>

#include "core/names.h"

namespace swarmlab::core::averaging {

enum class Strategy { AllReduce, ParameterServer, Planned, HalvingDoubling };

// Names in scenarios ("strategy") and on the command line.
inline constexpr Named<Strategy> kStrategyNames[] = {
    {Strategy::AllReduce, "ar"}, {Strategy::ParameterServer, "ps"}, {Strategy::Planned, "ours"},
    {Strategy::HalvingDoubling, "hd"}};
// Labels in reports, as DeDLOC's Table 1 prints them.
inline constexpr Named<Strategy> kStrategyLabels[] = {
    {Strategy::AllReduce, "AR"}, {Strategy::ParameterServer, "PS"}, {Strategy::Planned, "Ours"},
    {Strategy::HalvingDoubling, "HD"}};

inline std::string_view name(Strategy s) { return name_of(kStrategyNames, s); }
inline std::string_view label(Strategy s) { return name_of(kStrategyLabels, s); }

}  // namespace swarmlab::core::averaging
