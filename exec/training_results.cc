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

void SampleBooks::add(const SampleBooks& o) {
  computed += o.computed;
  contributed += o.contributed;
  discarded += o.discarded;
  accumulated += o.accumulated;
  lost += o.lost;
  balanced = balanced && o.balanced;
}

namespace {

// One incarnation's lines, read in order.
class IncarnationBooks {
 public:
  void on_step_line(const nlohmann::json& j) {
    const std::uint64_t contributed = j.value("contributed", std::uint64_t{0});
    step_contributed_ += contributed;
    on_books_line(j);
    if (!j.contains("handover") || !j["handover"].is_array()) return;
    std::uint64_t handed = 0;
    for (const auto& h : j["handover"]) {
      if (!h.is_array() || h.size() != 3 || !h[0].is_number_unsigned() || !h[1].is_number_unsigned()) continue;
      const auto first = h[0].get<std::uint64_t>(), count = h[1].get<std::uint64_t>();
      handed += count;
      // The stream positions of one incarnation go into at most one step.
      const auto next = taken_.lower_bound(first);
      if ((next != taken_.end() && next->first < first + count) ||
          (next != taken_.begin() && std::prev(next)->second > first))
        double_counted_ = true;
      taken_[first] = first + count;
    }
    if (handed != contributed) double_counted_ = true;  // the handover records are the contribution
  }
  void on_books_line(const nlohmann::json& j) {
    last_computed_ = std::max(last_computed_, j.value("samples_computed", std::uint64_t{0}));
    last_contributed_ = std::max(last_contributed_, j.value("samples_contributed", std::uint64_t{0}));
    last_discarded_ = std::max(last_discarded_, j.value("samples_discarded", std::uint64_t{0}));
  }
  void on_exit_line(const nlohmann::json& j) {
    exited_ = true;
    exit_.computed = j.value("samples_computed", std::uint64_t{0});
    exit_.contributed = j.value("samples_contributed", std::uint64_t{0});
    exit_.discarded = j.value("samples_discarded", std::uint64_t{0});
    exit_.accumulated = j.value("samples_accumulated", std::uint64_t{0});
    exit_.lost = j.value("samples_in_round", std::uint64_t{0});
  }
  bool exited() const { return exited_; }

  SampleBooks close() const {
    SampleBooks b;
    if (exited_) {
      b = exit_;
      b.balanced = b.computed == b.contributed + b.discarded + b.accumulated + b.lost && b.contributed == step_contributed_;
    } else {
      // Step lines are written once the parameters are read: a step may be in the books line of
      // an incarnation killed before its step line.
      b.computed = last_computed_;
      b.contributed = std::max(last_contributed_, step_contributed_);
      b.discarded = last_discarded_;
      b.balanced = b.computed >= b.contributed + b.discarded;
      b.lost = b.balanced ? b.computed - b.contributed - b.discarded : 0;
    }
    b.balanced = b.balanced && !double_counted_;
    return b;
  }

 private:
  std::uint64_t step_contributed_ = 0, last_computed_ = 0, last_contributed_ = 0, last_discarded_ = 0;
  std::map<std::uint64_t, std::uint64_t> taken_;  // handed-over stream ranges: first -> end
  bool double_counted_ = false;
  bool exited_ = false;
  SampleBooks exit_;
};

}  // namespace

TrainingSummary collect_training(const std::vector<std::string>& paths) {
  TrainingSummary out;
  struct StepAccumulator {
    TrainingStepSummary s;
    std::map<std::string, std::set<std::string>> hashes_by_lineage;
    std::map<std::string, std::size_t> reports_by_lineage;
    double loss_weighted = 0;
    std::uint64_t loss_samples = 0;
  };
  std::map<std::uint64_t, StepAccumulator> steps;
  std::set<std::string> survivor_states;
  for (std::size_t p = 0; p < paths.size(); ++p) {
    TrainingPeerSummary peer;
    peer.peer = p;
    std::optional<IncarnationBooks> books;
    auto close = [&] {
      if (!books) return;
      peer.samples.add(books->close());
      if (!books->exited()) ++peer.killed, peer.final_hash.reset(), peer.final_lineage.reset();
      books.reset();
    };
    std::ifstream in(paths[p]);
    std::string text;
    while (std::getline(in, text)) {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("step")) continue;
      const std::uint64_t step = j.value("step", std::uint64_t{0});
      const std::string event = j.value("event", std::string());
      if (event == "start" || !books) {
        close();
        books.emplace();
        ++peer.incarnations;
        if (event == "start") {
          out.parameters = std::max(out.parameters, j.value("parameters", std::uint64_t{0}));
          continue;
        }
      }
      const std::string lineage = j.value("lineage", std::string());
      if (event == "exit") {
        books->on_exit_line(j);
        peer.step = step;
        peer.final_hash = j.value("params_hash", std::string());
        peer.final_lineage = lineage;
        peer.test_accuracy = j.contains("test_accuracy") ? std::optional<double>(j.value("test_accuracy", 0.0)) : std::nullopt;
        peer.bytes_sent += j.value("bytes_sent", std::uint64_t{0});
        peer.bytes_received += j.value("bytes_received", std::uint64_t{0});
        continue;
      }
      if (event == "sync") {
        ++peer.syncs;
        if (j.value("ok", false) && j.value("updates", false)) ++peer.update_syncs;
        if (j.value("ok", false) && j.contains("params_hash")) {
          steps[step].hashes_by_lineage[lineage].insert(j.value("params_hash", std::string()));
          ++steps[step].reports_by_lineage[lineage];
        }
        continue;
      }
      if (event == "books") {
        books->on_books_line(j);
        continue;
      }
      if (!event.empty()) continue;
      books->on_step_line(j);
      peer.measured_sps = j.value("samples_per_s", peer.measured_sps);
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
      acc.hashes_by_lineage[lineage].insert(j.value("params_hash", std::string()));
      ++acc.reports_by_lineage[lineage];
      if (j.contains("test_accuracy")) {
        acc.s.test_accuracy = j.value("test_accuracy", 0.0);
        acc.s.test_loss = j.value("test_loss", 0.0);
      }
    }
    close();
    out.samples.add(peer.samples);
    if (peer.final_hash) survivor_states.insert(std::to_string(peer.step) + "/" + *peer.final_hash);
    out.peers.push_back(peer);
  }
  out.survivors_identical = survivor_states.size() <= 1;
  double previous_time = -1;
  for (auto& [step, acc] : steps) {
    std::size_t most = 0, reports = 0;
    for (const auto& [lineage, hashes] : acc.hashes_by_lineage) acc.s.consistent = acc.s.consistent && hashes.size() <= 1;
    for (const auto& [lineage, n] : acc.reports_by_lineage) most = std::max(most, n), reports += n;
    acc.s.lineages = acc.reports_by_lineage.size();
    if (acc.loss_samples > 0) acc.s.loss = acc.loss_weighted / static_cast<double>(acc.loss_samples);
    if (acc.s.members == 0) continue;  // only loaded, never averaged here
    out.consistent = out.consistent && acc.s.consistent;
    out.diverged_reports += reports - most;
    if (previous_time >= 0) out.longest_stall_s = std::max(out.longest_stall_s, acc.s.time_s - previous_time);
    previous_time = acc.s.time_s;
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
  j["diverged_reports"] = s.diverged_reports;
  j["survivors_identical"] = s.survivors_identical;
  j["longest_stall_s"] = s.longest_stall_s;
  j["samples"] = {{"computed", s.samples.computed},       {"in_steps", s.samples.contributed},
                  {"discarded", s.samples.discarded},     {"accumulated", s.samples.accumulated},
                  {"lost", s.samples.lost},               {"balanced", s.samples.balanced}};
  j["steps_per_hour"] = s.steps_per_hour();
  j["first_step_s"] = s.first_step_s;
  j["last_step_s"] = s.last_step_s;
  j["final_test_accuracy"] = s.final_test_accuracy ? nlohmann::ordered_json(*s.final_test_accuracy) : nlohmann::ordered_json(nullptr);
  j["peers"] = nlohmann::ordered_json::array();
  for (const auto& p : s.peers)
    j["peers"].push_back({{"peer", p.peer},
                          {"incarnations", p.incarnations},
                          {"killed", p.killed},
                          {"step", p.step},
                          {"samples_computed", p.samples.computed},
                          {"samples_contributed", p.samples.contributed},
                          {"samples_discarded", p.samples.discarded},
                          {"samples_accumulated", p.samples.accumulated},
                          {"samples_lost", p.samples.lost},
                          {"ledger_balanced", p.samples.balanced},
                          {"syncs", p.syncs}, {"update_syncs", p.update_syncs},
                          {"test_accuracy", p.test_accuracy ? nlohmann::ordered_json(*p.test_accuracy) : nlohmann::ordered_json(nullptr)},
                          {"bytes_sent", p.bytes_sent},
                          {"bytes_received", p.bytes_received}});
  j["steps"] = nlohmann::ordered_json::array();
  for (const auto& x : s.steps) {
    nlohmann::ordered_json row = {{"step", x.step},       {"time_s", x.time_s},   {"round_s", x.round_s},
                                  {"members", x.members}, {"samples", x.samples}, {"consistent", x.consistent},
                                  {"lineages", x.lineages}};
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
