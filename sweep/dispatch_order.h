#pragma once
// The order in which to hand work items to a pool whose workers each take the next item as soon
// as they finish one (run_forked), given each item's estimated cost: the order that, with the
// estimates, finishes soonest.
//
// Costliest first (LPT) is the rule in general. It can leave one worker idle at the end for the
// length of a short item: five ALBERT setups on two workers take 1.11 s of the longest lane's CPU
// in LPT order against 1.04 s in the best one. With few items every order is tried.
#include <cstddef>
#include <span>
#include <vector>

namespace swarmlab::sweep {

// Up to this many items every order is tried (8! = 40,320 orders, a few milliseconds).
inline constexpr std::size_t kExhaustiveDispatchItems = 8;

// When the last item ends if `order` is handed to `jobs` workers and each item takes its cost.
double list_makespan(std::span<const double> costs, std::span<const std::size_t> order, unsigned jobs);

// The indices of `costs` in the order to hand them out. Deterministic: among orders that end
// equally soon, costliest first wins, then the lexicographically first.
std::vector<std::size_t> dispatch_order(std::span<const double> costs, unsigned jobs);

}  // namespace swarmlab::sweep
