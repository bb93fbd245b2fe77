#include "core/averaging/role_assignment.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace swarmlab::core::averaging {

RoleAssignment assign_roles(Strategy strategy, const planner::PlannerInput& input, std::optional<std::size_t> server) {
  const auto& peers = input.peers;
  const std::size_t n = peers.size();
  RoleAssignment roles;
  roles.weights.assign(n, 0.0);
  roles.fractions.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) roles.weights[i] = peers[i].compute_sps > 0 ? 1.0 : 0.0;
  if (std::none_of(roles.weights.begin(), roles.weights.end(), [](double w) { return w > 0; }))
    throw std::invalid_argument("averaging: no peer computes, so there is nothing to average");

  switch (strategy) {
    case Strategy::AllReduce:
    case Strategy::HalvingDoubling: {  // HD's spans only say which elements a member's outcome covers
      std::size_t reducers = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (roles.weights[i] > 0 && planner::can_aggregate(input, i)) ++reducers;
      if (reducers == 0) throw std::invalid_argument("averaging: AR needs a reachable peer that computes");
      for (std::size_t i = 0; i < n; ++i)
        if (roles.weights[i] > 0 && planner::can_aggregate(input, i)) roles.fractions[i] = 1.0 / static_cast<double>(reducers);
      if (strategy == Strategy::HalvingDoubling) {
        for (std::size_t i = 0; i < n; ++i)
          if (roles.weights[i] > 0) roles.exchange_order.push_back(i);
        const auto rate = [&](std::size_t i) { return std::min(peers[i].upload_bps, peers[i].download_bps); };
        std::stable_sort(roles.exchange_order.begin(), roles.exchange_order.end(),
                         [&](std::size_t a, std::size_t b) { return rate(a) > rate(b); });
      }
      break;
    }
    case Strategy::ParameterServer: {
      std::optional<std::size_t> best = server;
      if (server && (*server >= n || !planner::can_aggregate(input, *server)))
        throw std::invalid_argument("averaging: the parameter server must be a reachable peer");
      for (std::size_t i = 0; i < n && !server; ++i) {
        if (!planner::can_aggregate(input, i)) continue;
        const double bw = std::min(peers[i].upload_bps, peers[i].download_bps);
        if (!best || bw > std::min(peers[*best].upload_bps, peers[*best].download_bps)) best = i;
      }
      if (!best) throw std::invalid_argument("averaging: PS needs a reachable peer");
      roles.server = best;
      roles.fractions[*best] = 1.0;
      break;
    }
    case Strategy::Planned: {
      planner::PlannerOptions options;
      options.roles = planner::Roles::AllComputeCapable;
      options.objective = planner::Objective::AveragingOnly;
      roles.plan = planner::solve(input, options);
      for (std::size_t i = 0; i < n; ++i) roles.fractions[i] = roles.plan->peers[i].fraction;
      break;
    }
  }
  return roles;
}

RoleAssignment assign_roles_among(Strategy strategy, const planner::PlannerInput& full_input,
                                  const std::vector<bool>& members, std::optional<std::size_t> server) {
  const std::size_t n = full_input.peers.size();
  if (members.size() != n) throw std::invalid_argument("assign_roles_among: one membership flag per peer expected");
  std::vector<std::size_t> index;  // sub-problem position -> peer
  planner::PlannerInput in = full_input;
  in.peers.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (members[i]) {
      index.push_back(i);
      in.peers.push_back(full_input.peers[i]);
    }
  if (!full_input.pair_caps.empty()) {
    in.pair_caps.assign(index.size(), std::vector<double>(index.size()));
    for (std::size_t a = 0; a < index.size(); ++a)
      for (std::size_t b = 0; b < index.size(); ++b) in.pair_caps[a][b] = full_input.pair_caps[index[a]][index[b]];
  }
  if (!full_input.routes.empty()) {
    in.routes.assign(index.size(), std::vector<int>(index.size()));
    for (std::size_t a = 0; a < index.size(); ++a)
      for (std::size_t b = 0; b < index.size(); ++b) in.routes[a][b] = full_input.routes[index[a]][index[b]];
    // A relay that is not a member keeps its links but is no longer a peer of the sub-problem.
    for (planner::RelayLink& relay : in.relays) {
      if (!relay.member) continue;
      const auto at = std::find(index.begin(), index.end(), *relay.member);
      relay.member = at == index.end() ? std::nullopt : std::optional<std::size_t>(at - index.begin());
    }
  }
  std::optional<std::size_t> sub_server;
  for (std::size_t a = 0; a < index.size() && server; ++a)
    if (index[a] == *server) sub_server = a;
  const RoleAssignment sub = assign_roles(strategy, in, sub_server);

  RoleAssignment full;
  full.weights.assign(n, 0.0);
  full.fractions.assign(n, 0.0);
  for (std::size_t a = 0; a < index.size(); ++a) {
    full.weights[index[a]] = sub.weights[a];
    full.fractions[index[a]] = sub.fractions[a];
  }
  if (sub.server) full.server = index[*sub.server];
  for (std::size_t a : sub.exchange_order) full.exchange_order.push_back(index[a]);
  if (sub.plan) {
    planner::Plan plan = *sub.plan;
    const auto expand = [&](const std::vector<std::vector<double>>& m) {
      std::vector<std::vector<double>> out(n, std::vector<double>(n, 0.0));
      for (std::size_t a = 0; a < index.size() && !m.empty(); ++a)
        for (std::size_t b = 0; b < index.size(); ++b) out[index[a]][index[b]] = m[a][b];
      return out;
    };
    plan.send_rate = expand(sub.plan->send_rate);
    plan.return_rate = expand(sub.plan->return_rate);
    full.plan = std::move(plan);
  }
  return full;
}

RoundPlan make_round_plan(std::uint64_t round_id, const RoleAssignment& roles, std::uint64_t length,
                          codec::Codec codec, std::uint64_t part_bytes) {
  RoundPlan plan;
  plan.round_id = round_id;
  plan.codec = codec;
  plan.part_bytes = part_bytes;
  std::vector<double> fractions;
  for (std::size_t i = 0; i < roles.weights.size(); ++i) {
    if (roles.weights[i] <= 0 && roles.fractions[i] <= 0) continue;
    plan.members.push_back(static_cast<PeerId>(i));
    plan.weights.push_back(roles.weights[i]);
    fractions.push_back(roles.fractions[i]);
  }
  plan.span_begin = apportion(length, fractions);
  // Members are the peers in index order, so a peer's member index is its rank among them.
  for (std::size_t i : roles.exchange_order)
    plan.exchange_order.push_back(static_cast<std::uint32_t>(
        std::lower_bound(plan.members.begin(), plan.members.end(), static_cast<PeerId>(i)) - plan.members.begin()));
  if (roles.plan && !roles.plan->send_rate.empty()) {
    const std::size_t m = plan.members.size();
    auto pace = std::make_shared<std::vector<double>>(m * m, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j)
        if (i != j)
          (*pace)[i * m + j] = roles.plan->send_rate[plan.members[i]][plan.members[j]] +
                               roles.plan->return_rate[plan.members[i]][plan.members[j]];
    plan.pace_bps = std::move(pace);
  }
  plan.validate();
  return plan;
}

double predicted_round_seconds(const RoleAssignment& roles, const planner::PlannerInput& input, std::uint64_t length,
                               codec::Codec codec) {
  const double bits = 8.0 * static_cast<double>(codec::encoded_size(codec, length));
  double senders = 0;
  for (double w : roles.weights) senders += w > 0 ? 1 : 0;
  double worst = 0;
  for (std::size_t i = 0; i < input.peers.size() && i < roles.fractions.size(); ++i) {
    const bool sends = roles.weights[i] > 0;
    const double f = roles.fractions[i];
    // Symmetric: what a member uploads (its vector to others, averages of its span back) equals
    // what it downloads (others' parts of its span, averages of their spans).
    const double volume = (sends ? (1 - f) * bits : 0) + f * bits * (senders - (sends ? 1 : 0));
    if (volume <= 0) continue;
    const double link = std::min(input.peers[i].upload_bps, input.peers[i].download_bps);
    if (!(link > 0)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, volume / link);
  }
  // A relay carries the relayed pairs' traffic on top of its own.
  std::vector<bool> sends(roles.weights.size());
  for (std::size_t i = 0; i < sends.size(); ++i) sends[i] = roles.weights[i] > 0;
  const std::vector<double> relayed = input.routes.empty() ? std::vector<double>{} : planner::relay_loads(input, sends, roles.fractions);
  for (std::size_t r = 0; r < relayed.size(); ++r) {
    if (!(relayed[r] > 0)) continue;
    const planner::RelayLink& relay = input.relays[r];
    double own = 0;
    if (relay.member) {
      const std::size_t k = *relay.member;
      own = (sends[k] ? 1 - roles.fractions[k] : 0) + roles.fractions[k] * (senders - (sends[k] ? 1 : 0));
    }
    const double link = std::min(relay.upload_bps, relay.download_bps);
    if (!(link > 0)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, (own + relayed[r]) * bits / link);
  }
  return worst;
}

}  // namespace swarmlab::core::averaging
