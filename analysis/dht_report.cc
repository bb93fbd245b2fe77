#include "analysis/dht_report.h"

#include <iomanip>

namespace swarmlab::analysis {

nlohmann::ordered_json to_json(const sim::DhtExperimentResult& r) {
  nlohmann::ordered_json j;
  j["peers"] = r.peers;
  j["id_bits"] = r.id_bits;
  j["bucket_size"] = r.bucket_size;
  j["churn_per_hour"] = r.churn_per_hour;
  j["hours"] = r.hours;
  j["seed"] = r.seed;
  j["get_success_rate"] = r.get_success_rate;
  j["gets"] = {{"completed", r.gets}, {"succeeded", r.gets_ok}, {"lost", r.gets_lost}, {"key_died", r.gets_key_died}};
  j["store_success_rate"] = r.store_success_rate;
  j["stores"] = {{"puts", r.puts}, {"puts_ok", r.puts_ok}, {"republishes", r.republishes},
                 {"republishes_ok", r.republishes_ok}};
  j["hops"] = {{"median", r.hops_median}, {"p99", r.hops_p99}, {"mean", r.hops_mean},
               {"bound", r.hop_bound}, {"histogram", r.hops_histogram}};
  j["lookup_latency_s"] = {{"median", r.latency_median_s}, {"p99", r.latency_p99_s}, {"mean", r.latency_mean_s}};
  j["messages_per_peer_minute"] = r.messages_per_peer_minute;
  j["bytes_per_peer_minute"] = r.bytes_per_peer_minute;
  j["per_peer_minute"] = {{"lookups", r.lookups_per_peer_minute},
                          {"find_requests", r.find_requests_per_peer_minute},
                          {"store_requests", r.store_requests_per_peer_minute},
                          {"liveness_pings", r.liveness_pings_per_peer_minute}};
  j["messages_dropped"] = r.messages_dropped;
  j["routing"] = {{"alive_fraction", r.routing_alive_fraction},
                  {"mean_entries", r.routing_mean_entries},
                  {"mean_nonempty_buckets", r.routing_mean_buckets}};
  j["joins"] = r.joins;
  j["departures"] = r.departures;
  j["live_keys_at_end"] = r.live_keys_at_end;
  j["events"] = r.events;
  j["simulated_s"] = r.simulated_s;
  return j;
}

nlohmann::ordered_json run_info_json(const sim::DhtExperimentResult& r) {
  return {{"wall_s", r.wall_s}, {"wall_measured_s", r.wall_measured_s}};
}

void print_text(const sim::DhtExperimentResult& r, std::ostream& out) {
  out << std::fixed << std::setprecision(4);
  out << "DHT: " << r.peers << " peers (" << r.id_bits << "-bit ids, k = " << r.bucket_size << "), churn "
      << r.churn_per_hour << "/h, " << r.hours << " h, seed " << r.seed << "\n";
  out << "  gets of live keys: " << r.gets_ok << "/" << r.gets << " succeeded (" << 100 * r.get_success_rate
            << "%), " << r.gets_lost << " lost with their getter\n";
  out << "  stores: " << r.puts_ok << "/" << r.puts << " puts, " << r.republishes_ok << "/" << r.republishes
            << " republishes succeeded\n";
  out << "  hops: median " << r.hops_median << ", p99 " << r.hops_p99 << ", mean " << r.hops_mean
            << " (bound " << r.hop_bound << "); histogram";
  for (std::size_t h = 0; h < r.hops_histogram.size(); ++h) out << " " << h << ":" << r.hops_histogram[h];
  out << "\n  lookup latency: median " << r.latency_median_s << " s, p99 " << r.latency_p99_s << " s\n";
  out << "  traffic per peer-minute: " << r.messages_per_peer_minute << " messages, "
            << r.bytes_per_peer_minute << " bytes (" << r.lookups_per_peer_minute << " lookups, "
            << r.find_requests_per_peer_minute << " find, " << r.store_requests_per_peer_minute << " store, "
            << r.liveness_pings_per_peer_minute << " liveness-ping requests)\n";
  out << "  routing tables: " << 100 * r.routing_alive_fraction << "% entries alive, "
            << r.routing_mean_entries << " entries, " << r.routing_mean_buckets << " non-empty buckets\n";
  out << "  " << r.joins << " joins, " << r.departures << " departures, " << r.events << " events, "
            << r.wall_s << " s wall\n";
}

}  // namespace swarmlab::analysis
