#include "sim/experiments/crossval.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"
#include "sim/network/backend.h"
#include "sim/engine.h"

namespace swarmlab::sim {
namespace {

constexpr double kMbps = 1e6;
constexpr std::uint64_t kMB = 1'000'000;

// One case, run once per backend; it measures one or more rows (name suffix, description), and
// returns one time in seconds per row.
struct Case {
  std::vector<std::pair<std::string, std::string>> rows;
  std::function<std::vector<double>(const std::string& backend)> run;
};

LinkSpec symmetric(double mbps, double latency_s) { return LinkSpec{mbps * kMbps, mbps * kMbps, latency_s}; }

// A network, some transfers and timed actions; the result is when the last transfer finished.
struct TransferRun {
  std::vector<LinkSpec> links;
  struct Send {
    PeerId from, to;
    std::uint64_t bytes;
  };
  std::vector<Send> sends;
  std::function<void(Engine&, Network&)> actions;
  // Also send everything a second time once the first batch has arrived, over the now open (warm)
  // connections, and time that batch as a second row.
  bool warm_repeat = false;

  std::vector<double> operator()(const std::string& backend) const {
    Engine engine;
    auto net = make_network(backend, engine, links);
    if (actions) actions(engine, *net);
    std::vector<double> times;
    std::size_t failed = 0;
    for (int batch = 0; batch < (warm_repeat ? 2 : 1); ++batch) {
      const double start = engine.now();
      double last = start;
      for (const auto& s : sends)
        net->transmit(s.from, s.to, s.bytes, [&](const TransferOutcome& o) {
          last = std::max(last, o.finished);
          failed += o.delivered ? 0 : 1;
        });
      engine.run();
      times.push_back(last - start);
    }
    if (failed) throw std::runtime_error("crossval: a transfer failed on the " + backend + " backend");
    return times;
  }
};

TransferRun one_transfer() {
  TransferRun r;
  r.links = {symmetric(1000, 0.025), symmetric(1000, 0.025)};
  r.sends = {{0, 1, 100 * kMB}};
  r.warm_repeat = true;
  return r;
}

// n senders (200 Mb/s) each push 10 MB to one server (1 Gb/s): the server's download is the
// bottleneck from a fan-in of 5 on.
TransferRun fan_in(std::size_t n) {
  TransferRun r;
  r.links.push_back(symmetric(1000, 0.025));
  for (std::size_t i = 0; i < n; ++i) {
    r.links.push_back(symmetric(200, 0.025));
    r.sends.push_back({static_cast<PeerId>(i + 1), 0, 10 * kMB});
  }
  r.warm_repeat = true;
  return r;
}

// Every pair exchanges 5 MB over links whose download is five times their upload.
TransferRun asymmetric() {
  TransferRun r;
  for (int i = 0; i < 6; ++i) r.links.push_back(LinkSpec{100 * kMbps, 20 * kMbps, 0.025});
  for (PeerId i = 0; i < 6; ++i)
    for (PeerId j = 0; j < 6; ++j)
      if (i != j) r.sends.push_back({i, j, 5 * kMB});
  return r;
}

// 100 ms one-way on every access link (400 ms round trips): 20 MB on one pair, 1 MB on another.
TransferRun high_latency() {
  TransferRun r;
  r.links = {symmetric(100, 0.1), symmetric(100, 0.1), symmetric(100, 0.1)};
  r.sends = {{0, 1, 20 * kMB}, {2, 1, 1 * kMB}};
  r.warm_repeat = true;
  return r;
}

// Two flows share a 200 Mb/s uplink that drops to 50 Mb/s at t = 1 s and recovers at t = 3 s.
TransferRun bandwidth_change() {
  TransferRun r;
  r.links = {symmetric(200, 0.025), symmetric(200, 0.025), symmetric(200, 0.025)};
  r.sends = {{0, 1, 40 * kMB}, {0, 2, 40 * kMB}};
  r.actions = [](Engine& e, Network& net) {
    e.at(1.0, [&net] { net.set_capacity(0, 200 * kMbps, 50 * kMbps); });
    e.at(3.0, [&net] { net.set_capacity(0, 200 * kMbps, 200 * kMbps); });
  };
  return r;
}

// Butterfly all-reduce rounds of a Table 1 setup with a smaller vector: the first round (cold
// connections) and the mean of rounds 2-3 (warm).
std::function<std::vector<double>(const std::string&)> butterfly(std::string path, std::uint64_t parameters) {
  return [path = std::move(path), parameters](const std::string& backend) {
    scenarios::Scenario sc = scenarios::load_scenario(path);
    sc.workload.parameters = parameters;
    AveragingRunConfig cfg;
    cfg.strategy = core::averaging::Strategy::AllReduce;
    cfg.rounds = 3;
    cfg.backend = backend;
    const AveragingRunResult r = run_averaging(sc, cfg);
    return std::vector<double>{r.rounds.at(0).duration_s, (r.rounds.at(1).duration_s + r.rounds.at(2).duration_s) / 2};
  };
}

Case single(std::string name, std::string description, TransferRun run) {
  std::vector<std::pair<std::string, std::string>> rows = {{std::move(name), std::move(description)}};
  if (run.warm_repeat) rows.emplace_back(rows[0].first + "/warm", "the same again over the open connection");
  return Case{std::move(rows), std::move(run)};
}

std::vector<Case> suite(const std::string& scenario_dir) {
  std::vector<Case> cases;
  cases.push_back(single("transfer", "one 100 MB transfer, 1 Gb/s, 25 ms one-way (new connection)", one_transfer()));
  for (std::size_t n : {2, 8, 24})
    cases.push_back(single("fan-in-" + std::to_string(n),
                           std::to_string(n) + " x 10 MB into one server (senders 200 Mb/s, server 1 Gb/s)", fan_in(n)));
  for (const auto& [name, file, what] :
       {std::tuple{"butterfly-8", "A.json", "Table 1 setup A (8 x 1 Gb/s)"},
        std::tuple{"butterfly-24", "C.json", "Table 1 setup C (8 x 1 Gb/s + 16 x 200 Mb/s)"}})
    cases.push_back(Case{{{name, std::string("butterfly all-reduce, ") + what + ", 5M fp16 parameters: round 1"},
                          {std::string(name) + "/warm", "the same: mean of rounds 2-3"}},
                         butterfly(scenario_dir + "/" + file, 5'000'000)});
  cases.push_back(single("asymmetric", "6 peers, 100 Mb/s down / 20 Mb/s up, every pair 5 MB", asymmetric()));
  cases.push_back(single("high-latency", "100 ms one-way, 100 Mb/s: 20 MB and 1 MB into one peer", high_latency()));
  cases.push_back(single("bandwidth-change", "2 x 40 MB from one peer; its 200 Mb/s upload is 50 Mb/s during 1-3 s",
                         bandwidth_change()));
  return cases;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

CrossvalReport run_crossval(const CrossvalOptions& options) {
  const std::vector<Case> cases = suite(options.scenario_dir);
  CrossvalReport report;
  std::size_t done = 0;
  for (const Case& c : cases) {
    const double t0 = cpu_seconds();
    const std::vector<double> flow = c.run("flow");
    const double t1 = cpu_seconds();
    const std::vector<double> ns3 = c.run("ns3");
    const double t2 = cpu_seconds();
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      CrossvalCase out;
      out.name = c.rows[i].first;
      out.description = c.rows[i].second;
      out.flow_s = flow.at(i);
      out.ns3_s = ns3.at(i);
      // Processor time is per case; it is reported on the case's first row.
      out.flow_cpu_s = i == 0 ? t1 - t0 : 0;
      out.ns3_cpu_s = i == 0 ? t2 - t1 : 0;
      report.cases.push_back(std::move(out));
    }
    if (options.on_case) options.on_case(++done, cases.size());
  }
  return report;
}

nlohmann::ordered_json to_json(const CrossvalReport& report) {
  nlohmann::ordered_json j;
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& c : report.cases)
    j["cases"].push_back({{"name", c.name},
                          {"description", c.description},
                          {"flow_s", c.flow_s},
                          {"ns3_s", c.ns3_s},
                          {"relative_difference", c.relative_difference()},
                          {"flow_cpu_s", c.flow_cpu_s},
                          {"ns3_cpu_s", c.ns3_cpu_s}});
  return j;
}

std::string to_text(const CrossvalReport& report) {
  std::ostringstream out;
  out << "Cross-validation: fluid model (flow) vs packet-level TCP (ns3), completion time in seconds\n\n";
  out << "case              |     flow      ns3    diff | ns3 cpu s | scenario\n";
  out << "------------------+---------------------------+-----------+---------\n";
  for (const auto& c : report.cases) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-17s | %8.3f %8.3f %+6.1f%% | %9.2f | ", c.name.c_str(), c.flow_s, c.ns3_s,
                  100 * c.relative_difference(), c.ns3_cpu_s);
    out << buf << c.description << "\n";
  }
  out << "\nDifferences above 10% are explained in README.md, \"Notes on fidelity\".\n";
  return out.str();
}

}  // namespace swarmlab::sim
