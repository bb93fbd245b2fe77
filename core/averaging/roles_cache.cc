#include "core/averaging/roles_cache.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "core/wire.h"

namespace swarmlab::core::averaging {

namespace {

std::vector<std::uint8_t> key_of(Strategy strategy, const planner::PlannerInput& input, std::optional<std::size_t> server) {
  std::vector<std::uint8_t> key;
  key.reserve(32 + 32 * input.peers.size() + 8 * input.peers.size() * input.peers.size());
  Writer w(key);
  w.u8(static_cast<std::uint8_t>(strategy));
  w.u64(server ? *server + 1 : 0);
  w.f64(input.target_batch);
  w.f64(input.gradient_bits);
  for (const auto& p : input.peers) {
    w.f64(p.compute_sps);
    w.f64(p.download_bps);
    w.f64(p.upload_bps);
    w.u8(p.client_mode ? 1 : 0);
  }
  for (const auto& row : input.pair_caps)
    for (double c : row) w.f64(c);
  w.u64(input.routes.size());
  for (const auto& row : input.routes)
    for (int r : row) w.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(r)));
  for (const auto& relay : input.relays) {
    w.f64(relay.download_bps);
    w.f64(relay.upload_bps);
    w.u64(relay.member ? *relay.member + 1 : 0);
  }
  return key;
}

// Members by their capacities (ties in group order): order[a] is the group index of the a-th.
std::vector<std::size_t> canonical_order(const planner::PlannerInput& input) {
  std::vector<std::size_t> order(input.peers.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto tuple = [&](std::size_t i) {
    const auto& p = input.peers[i];
    return std::make_tuple(p.compute_sps, p.download_bps, p.upload_bps, p.client_mode);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tuple(a) < tuple(b); });
  return order;
}

// The inverse permutation: position[order[a]] = a.
std::vector<std::size_t> inverse(const std::vector<std::size_t>& order) {
  std::vector<std::size_t> position(order.size());
  for (std::size_t a = 0; a < order.size(); ++a) position[order[a]] = a;
  return position;
}

// out[a] = v[order[a]] (and the same on both indices of a matrix); empty stays empty.
template <typename T>
std::vector<T> permute(const std::vector<T>& v, const std::vector<std::size_t>& order) {
  if (v.empty()) return v;
  std::vector<T> out(order.size());
  for (std::size_t a = 0; a < order.size(); ++a) out[a] = v[order[a]];
  return out;
}

template <typename T>
std::vector<std::vector<T>> permute_matrix(const std::vector<std::vector<T>>& m, const std::vector<std::size_t>& order) {
  std::vector<std::vector<T>> out = permute(m, order);
  for (auto& row : out) row = permute(row, order);
  return out;
}

planner::PlannerInput permuted(const planner::PlannerInput& input, const std::vector<std::size_t>& order) {
  const std::vector<std::size_t> position = inverse(order);
  planner::PlannerInput out = input;
  out.peers = permute(input.peers, order);
  out.pair_caps = permute_matrix(input.pair_caps, order);
  out.routes = permute_matrix(input.routes, order);
  for (auto& relay : out.relays)
    if (relay.member) relay.member = position[*relay.member];
  return out;
}

// Roles solved on the input permuted by `order`, back in the input's own order.
RoleAssignment unpermuted(const RoleAssignment& roles, const std::vector<std::size_t>& order) {
  const std::vector<std::size_t> position = inverse(order);
  RoleAssignment out = roles;
  out.weights = permute(roles.weights, position);
  out.fractions = permute(roles.fractions, position);
  if (roles.server) out.server = order[*roles.server];
  if (roles.plan) {
    out.plan->peers = permute(roles.plan->peers, position);
    out.plan->send_rate = permute_matrix(roles.plan->send_rate, position);
    out.plan->return_rate = permute_matrix(roles.plan->return_rate, position);
    out.plan->aggregation_rate = permute(roles.plan->aggregation_rate, position);
  }
  return out;
}

}  // namespace

std::optional<RoleAssignment> RolesCache::solve(Strategy strategy, const planner::PlannerInput& input,
                                                std::optional<std::size_t> server) {
  bool any_sender = false;
  for (const auto& p : input.peers) any_sender |= p.compute_sps > 0;
  if (!any_sender) return std::nullopt;
  ++solves_;
  try {
    return assign_roles(strategy, input, server);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // the strategy cannot run with these members (e.g. nobody reachable)
  }
}

const RoleAssignment* RolesCache::roles(Strategy strategy, const planner::PlannerInput& input,
                                        std::optional<std::size_t> server) {
  if (last_ && last_->generation == generation_ && last_->strategy == strategy && last_->server == server &&
      last_->input == input) {
    ++hits_;
    return last_->roles;
  }
  const RoleAssignment* found = lookup(strategy, input, server);
  last_ = LastLookup{strategy, server, input, nullptr, found, generation_};
  return found;
}

const RoleAssignment* RolesCache::roles(Strategy strategy, const std::shared_ptr<const planner::PlannerInput>& input,
                                        std::optional<std::size_t> server) {
  if (last_ && last_->shared == input && last_->generation == generation_ && last_->strategy == strategy &&
      last_->server == server) {
    ++hits_;
    return last_->roles;
  }
  const RoleAssignment* found = roles(strategy, *input, server);
  last_->shared = input;
  return found;
}

const RoleAssignment* RolesCache::lookup(Strategy strategy, const planner::PlannerInput& input,
                                         std::optional<std::size_t> server) {
  std::vector<std::uint8_t> key = key_of(strategy, input, server);
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++hits_;
    return it->second ? &*it->second : nullptr;
  }
  std::optional<RoleAssignment> solved;
  if (strategy == Strategy::Planned && !server) {
    // The planner's LP has many optima where members are alike, and which one it returns depends
    // on the order it is given. Groups list their members in a random order (matchmaking shuffles
    // it), so solved in group order the same members would get other roles every round. Solved in
    // capacity order and mapped back, the same capacities always get the same roles.
    const std::vector<std::size_t> order = canonical_order(input);
    const planner::PlannerInput canonical = permuted(input, order);
    std::vector<std::uint8_t> canonical_key = key_of(strategy, canonical, server);
    auto it = canonical_.find(canonical_key);
    if (it == canonical_.end()) {
      if (canonical_.size() >= kMaxEntries) canonical_.clear();
      it = canonical_.emplace(std::move(canonical_key), solve(strategy, canonical, server)).first;
    } else {
      ++hits_;
    }
    if (it->second) solved = unpermuted(*it->second, order);
  } else {
    solved = solve(strategy, input, server);
  }
  if (cache_.size() >= kMaxEntries) {
    cache_.clear();
    ++generation_;
  }
  const auto it = cache_.emplace(std::move(key), std::move(solved)).first;
  return it->second ? &*it->second : nullptr;
}

double RolesCache::predicted_seconds(const RoleAssignment& roles, const planner::PlannerInput& input,
                                     std::uint64_t length, codec::Codec codec) {
  // A roles entry belongs to one input (its key), so the entry stands for the input.
  const PredictedKey key{&roles, generation_, length, codec};
  if (predicted_key_ && *predicted_key_ == key) return predicted_;
  predicted_ = predicted_round_seconds(roles, input, length, codec);
  predicted_key_ = key;
  return predicted_;
}

const RoundPlan& RolesCache::round_plan(std::uint64_t round_id, const RoleAssignment& roles,
                                        const std::vector<PeerId>& members, std::uint64_t length, codec::Codec codec,
                                        std::uint64_t part_bytes, const std::function<RoundPlan()>& build) {
  if (plan_key_ && plan_key_->roles == &roles && plan_key_->generation == generation_ && plan_key_->length == length &&
      plan_key_->codec == codec && plan_key_->part_bytes == part_bytes && plan_key_->members == members) {
    plan_key_->round_id = plan_.round_id = round_id;
    return plan_;
  }
  plan_ = build();
  plan_key_ = PlanKey{round_id, &roles, generation_, members, length, codec, part_bytes};
  return plan_;
}

}  // namespace swarmlab::core::averaging
