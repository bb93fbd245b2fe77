#include "exec/training_results.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace swarmlab::exec {

double TrainingSummary::steps_per_hour() const {
  if (steps.size() < 2 || last_step_s <= first_step_s) return 0;
  return static_cast<double>(steps.back().step - steps.front().step) / (last_step_s - first_step_s) * 3600.0;
}

TrainingSummary collect_training(const std::vector<std::string>& paths) {
  TrainingSummary out;
  struct StepAccumulator {
    TrainingStepSummary s;
    std::set<std::string> hashes;
    double loss_weighted = 0;
    std::uint64_t loss_samples = 0;
  };
  std::map<std::uint64_t, StepAccumulator> steps;
  for (std::size_t p = 0; p < paths.size(); ++p) {
    TrainingPeerSummary peer;
    peer.peer = p;
    std::ifstream in(paths[p]);
    std::string text;
    while (std::getline(in, text)) {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("step")) continue;
      const std::uint64_t step = j.value("step", std::uint64_t{0});
      const std::string event = j.value("event", std::string());
      if (event == "exit") {
        ++peer.incarnations;
        peer.step = step;
        const auto c = j.value("samples_computed", std::uint64_t{0}), k = j.value("samples_contributed", std::uint64_t{0}),
                   d = j.value("samples_discarded", std::uint64_t{0}), a = j.value("samples_accumulated", std::uint64_t{0});
        peer.computed += c;
        peer.contributed += k;
        peer.discarded += d;
        peer.accumulated += a;
        peer.ledger_balanced = peer.ledger_balanced && c == k + d + a;
        peer.test_accuracy = j.contains("test_accuracy") ? std::optional<double>(j.value("test_accuracy", 0.0)) : std::nullopt;
        peer.bytes_sent += j.value("bytes_sent", std::uint64_t{0});
        peer.bytes_received += j.value("bytes_received", std::uint64_t{0});
        continue;
      }
      if (event == "sync") {
        ++peer.syncs;
        if (j.value("ok", false) && j.contains("params_hash")) steps[step].hashes.insert(j.value("params_hash", std::string()));
        continue;
      }
      if (!event.empty()) continue;
      StepAccumulator& acc = steps[step];
      acc.s.step = step;
      acc.s.time_s = std::max(acc.s.time_s, j.value("time_s", 0.0));
      acc.s.round_s = std::max(acc.s.round_s, j.value("round_s", 0.0));
      ++acc.s.members;
      const std::uint64_t contributed = j.value("contributed", std::uint64_t{0});
      acc.s.samples += contributed;
      if (j.contains("loss") && j["loss"].is_number() && contributed > 0) {
        acc.loss_weighted += j["loss"].get<double>() * static_cast<double>(contributed);
        acc.loss_samples += contributed;
      }
      acc.hashes.insert(j.value("params_hash", std::string()));
      if (j.contains("test_accuracy")) {
        acc.s.test_accuracy = j.value("test_accuracy", 0.0);
        acc.s.test_loss = j.value("test_loss", 0.0);
      }
    }
    out.peers.push_back(peer);
  }
  for (auto& [step, acc] : steps) {
    acc.s.consistent = acc.hashes.size() <= 1;
    if (acc.loss_samples > 0) acc.s.loss = acc.loss_weighted / static_cast<double>(acc.loss_samples);
    if (acc.s.members == 0) continue;  // only loaded, never averaged here
    out.consistent = out.consistent && acc.s.consistent;
    out.steps.push_back(acc.s);
  }
  if (!out.steps.empty()) {
    out.last_step = out.steps.back().step;
    out.first_step_s = out.steps.front().time_s;
    out.last_step_s = out.steps.back().time_s;
  }
  for (const auto& p : out.peers)
    if (p.test_accuracy && p.step == out.last_step)
      out.final_test_accuracy = std::max(out.final_test_accuracy.value_or(0.0), *p.test_accuracy);
  return out;
}

nlohmann::ordered_json training_json(const TrainingSummary& s) {
  nlohmann::ordered_json j;
  j["last_step"] = s.last_step;
  j["consistent"] = s.consistent;
  j["steps_per_hour"] = s.steps_per_hour();
  j["first_step_s"] = s.first_step_s;
  j["last_step_s"] = s.last_step_s;
  j["final_test_accuracy"] = s.final_test_accuracy ? nlohmann::ordered_json(*s.final_test_accuracy) : nlohmann::ordered_json(nullptr);
  j["peers"] = nlohmann::ordered_json::array();
  for (const auto& p : s.peers)
    j["peers"].push_back({{"peer", p.peer},
                          {"incarnations", p.incarnations},
                          {"step", p.step},
                          {"samples_computed", p.computed},
                          {"samples_contributed", p.contributed},
                          {"samples_discarded", p.discarded},
                          {"samples_accumulated", p.accumulated},
                          {"ledger_balanced", p.ledger_balanced},
                          {"syncs", p.syncs},
                          {"test_accuracy", p.test_accuracy ? nlohmann::ordered_json(*p.test_accuracy) : nlohmann::ordered_json(nullptr)},
                          {"bytes_sent", p.bytes_sent},
                          {"bytes_received", p.bytes_received}});
  j["steps"] = nlohmann::ordered_json::array();
  for (const auto& x : s.steps) {
    nlohmann::ordered_json row = {{"step", x.step},       {"time_s", x.time_s},   {"round_s", x.round_s},
                                  {"members", x.members}, {"samples", x.samples}, {"consistent", x.consistent}};
    row["loss"] = x.loss ? nlohmann::ordered_json(*x.loss) : nlohmann::ordered_json(nullptr);
    if (x.test_accuracy) {
      row["test_accuracy"] = *x.test_accuracy;
      row["test_loss"] = *x.test_loss;
    }
    j["steps"].push_back(row);
  }
  return j;
}

std::string training_metrics_csv(const TrainingSummary& s) {
  std::ostringstream o;
  o.precision(10);
  o << "step,time_s,members,samples,loss,test_accuracy,test_loss,round_s,consistent\n";
  for (const auto& x : s.steps) {
    o << x.step << "," << x.time_s << "," << x.members << "," << x.samples << ",";
    if (x.loss) o << *x.loss;
    o << ",";
    if (x.test_accuracy) o << *x.test_accuracy;
    o << ",";
    if (x.test_loss) o << *x.test_loss;
    o << "," << x.round_s << "," << (x.consistent ? 1 : 0) << "\n";
  }
  return o.str();
}

}  // namespace swarmlab::exec
