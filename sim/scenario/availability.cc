#include "sim/scenario/availability.h"

#include <algorithm>

namespace swarmlab::sim {

std::size_t schedule_availability(const scenarios::Scenario& sc, Engine& engine, std::function<void(PeerId)> up,
                                  std::function<void(PeerId)> down) {
  std::size_t scheduled = 0;
  auto up_if_allowed = [&sc, &engine, up](PeerId i) {
    if (sc.peer_up(i, engine.now())) up(i);  // a churn "up" outside the join/leave window is ignored
  };
  for (std::size_t k = 0; k < sc.peers.size(); ++k) {
    const auto i = static_cast<PeerId>(k);
    const auto& p = sc.peers[k];
    if (p.join_s && *p.join_s > 0) engine.at(*p.join_s, [up_if_allowed, i] { up_if_allowed(i); }), ++scheduled;
    if (p.leave_s) engine.at(*p.leave_s, [down, i] { down(i); }), ++scheduled;
  }
  for (const auto& e : sc.churn.events) {
    const auto i = static_cast<PeerId>(*sc.find_peer(e.peer));
    if (e.up) engine.at(e.time_s, [up_if_allowed, i] { up_if_allowed(i); });
    else engine.at(e.time_s, [down, i] { down(i); });
    ++scheduled;
  }
  return scheduled;
}

std::vector<std::vector<double>> scheduled_departures(const scenarios::Scenario& sc) {
  std::vector<std::vector<double>> out(sc.peers.size());
  for (std::size_t k = 0; k < sc.peers.size(); ++k)
    if (sc.peers[k].leave_s) out[k].push_back(*sc.peers[k].leave_s);
  for (const auto& e : sc.churn.events)
    if (!e.up) out[*sc.find_peer(e.peer)].push_back(e.time_s);
  for (auto& times : out) std::sort(times.begin(), times.end());
  return out;
}

std::vector<double> scheduled_arrivals(const scenarios::Scenario& sc) {
  std::vector<double> out;
  for (std::size_t k = 0; k < sc.peers.size(); ++k) {
    const auto& j = sc.peers[k].join_s;
    if (j && *j > 0 && sc.peer_up(k, *j)) out.push_back(*j);
  }
  for (const auto& e : sc.churn.events)
    if (e.up && sc.peer_up(*sc.find_peer(e.peer), e.time_s)) out.push_back(e.time_s);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace swarmlab::sim
