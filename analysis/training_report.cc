#include "analysis/training_report.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace swarmlab::analysis {

nlohmann::ordered_json to_json(const sim::TrainingRunResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["mode"] = r.mode;
  j["dpu"] = r.dpu;
  j["duration_s"] = r.duration_s;
  j["steps"] = r.steps;
  j["steps_per_hour"] = r.steps_per_hour;
  j["local_steps_per_step"] = r.local_steps_per_step;
  j["averaging_s"] = r.averaging_s;
  j["mean_round_s"] = r.mean_round_s;
  j["rounds_simulated"] = r.rounds_simulated;
  j["rounds_replayed"] = r.rounds_replayed;
  j["samples"] = {{"computed", r.ledger.computed}, {"in_steps", r.ledger.in_steps}, {"lost", r.ledger.lost},
                  {"discarded", r.ledger.discarded}, {"pending", r.ledger.pending}};
  j["state_downloads"] = r.state_downloads;
  j["update_downloads"] = r.update_downloads;
  j["state_bytes"] = r.state_bytes;
  j["gradient_bytes"] = r.gradient_bytes;
  j["mean_utilisation"] = r.mean_utilisation;
  j["mean_idle_s"] = r.mean_idle_s;
  j["mean_averaging_s"] = r.mean_averaging_s;
  j["mean_wait_s"] = r.mean_wait_s;
  j["mean_traffic_gb_per_hour"] = r.mean_traffic_gb_per_hour;
  j["coordination"] = r.coordination;
  j["authenticated"] = r.authenticated;
  j["rounds"] = r.rounds;
  j["max_left_out_share"] = r.max_left_out_share;
  j["vcu_reference_sps"] = r.vcu_reference_sps;
  j["vcu_total"] = r.vcu_total;
  if (r.nat_traversal) j["relayed_bytes"] = r.relayed_bytes;
  j["events"] = r.events;
  auto& peers = j["peers"] = nlohmann::ordered_json::array();
  for (const auto& p : r.peers)
    peers.push_back({{"name", p.name}, {"computes", p.computes}, {"up_s", p.up_s}, {"compute_s", p.compute_s},
                     {"idle_s", p.idle_s}, {"utilisation", p.utilisation}, {"averaging_s", p.averaging_s},
                     {"wait_s", p.wait_s}, {"sync_s", p.sync_s}, {"bytes_sent", p.bytes_sent},
                     {"bytes_received", p.bytes_received}, {"traffic_gb_per_hour", p.traffic_gb_per_hour},
                     {"samples", p.samples}, {"state_downloads", p.state_downloads}, {"update_downloads", p.update_downloads}, {"step", p.step},
                     {"steps_eligible", p.steps_eligible}, {"steps_left_out", p.steps_left_out}, {"vcu", p.vcu}});
  auto& series = j["series"] = nlohmann::ordered_json::array();
  for (const auto& s : r.series)
    series.push_back({{"t_s", s.t_s}, {"samples_per_s", s.samples_per_s}, {"active_peers", s.active_peers},
                      {"steps", s.steps}});
  return j;
}

namespace {
std::ofstream open(const std::filesystem::path& p) {
  std::ofstream out(p);
  if (!out) throw std::runtime_error("cannot write " + p.string());
  return out;
}
}  // namespace

void write_training_outputs(const sim::TrainingRunResult& r, const std::string& dir, const std::string& stem) {
  const std::filesystem::path d(dir);
  std::filesystem::create_directories(d);
  open(d / (stem + ".json")) << to_json(r).dump(2) << "\n";
  auto series = open(d / (stem + "_series.csv"));
  series << "t_s,samples_per_s,active_peers,steps\n";
  for (const auto& s : r.series) series << s.t_s << "," << s.samples_per_s << "," << s.active_peers << "," << s.steps << "\n";
  auto peers = open(d / (stem + "_peers.csv"));
  peers << "name,computes,up_s,compute_s,idle_s,utilisation,averaging_s,wait_s,sync_s,bytes_sent,bytes_received,"
           "traffic_gb_per_hour,samples,state_downloads,update_downloads,step,steps_eligible,steps_left_out,vcu\n";
  for (const auto& p : r.peers)
    peers << p.name << "," << p.computes << "," << p.up_s << "," << p.compute_s << "," << p.idle_s << ","
          << p.utilisation << "," << p.averaging_s << "," << p.wait_s << "," << p.sync_s << "," << p.bytes_sent << ","
          << p.bytes_received << "," << p.traffic_gb_per_hour << "," << p.samples << "," << p.state_downloads << ","
          << p.update_downloads << "," << p.step << "," << p.steps_eligible << "," << p.steps_left_out << "," << p.vcu
          << "\n";
  auto steps = open(d / (stem + "_steps.csv"));
  steps << "step,t_s\n";
  for (std::size_t i = 0; i < r.step_times.size(); ++i) steps << i + 1 << "," << r.step_times[i] << "\n";
}

}  // namespace swarmlab::analysis
