// swarmlab robust: Byzantine-robust averaging, measured (docs/trust.md §3). A collaboration of
// simulated peers trains softmax regression on Fashion-MNIST while 1 to 7 of them attack; every
// attack and count runs with the weighted mean and with CenteredClip. Reports how far each
// round's average lands from the honest mean, the training loss, and the test accuracy.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/data_paths.h"
#include "cli/python_script.h"
#include "learn/fashion_mnist.h"
#include "learn/softmax_regression.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/robustness_experiment.h"

namespace swarmlab::cli {
namespace {

struct RobustArgs {
  std::string scenario;  // empty: scenarios/robust/fashion-mnist-16.json
  std::vector<std::string> attacks;
  std::vector<std::size_t> attackers = {1, 2, 3, 4, 5, 6, 7};
  std::uint64_t steps = 200;
  double lr = 0.1;
  double tau = 0;  // 0: the scenario's
  std::uint32_t iterations = 0;
  std::string data = learn::kFashionMnistDir;
  std::string out;
  bool json = false;
};

struct Run {
  std::string attack;  // "none" for the baseline
  std::size_t attackers = 0;
  bool clip = false;
  sim::RobustnessResult result;
  learn::SoftmaxRegression::Evaluation test;
};

double tail_mean(const std::vector<double>& v, std::size_t count) {
  if (v.empty()) return 0;
  const std::size_t k = std::min(count, v.size());
  double s = 0;
  for (std::size_t i = v.size() - k; i < v.size(); ++i) s += v[i];
  return s / static_cast<double>(k);
}

nlohmann::ordered_json to_json(const Run& r) {
  nlohmann::ordered_json j;
  j["attack"] = r.attack;
  j["attackers"] = r.attackers;
  j["centered_clip"] = r.clip;
  j["steps"] = r.result.steps;
  j["mean_relative_distance"] = r.result.mean_relative_distance();
  j["first_relative_distance"] = r.result.relative_distance.empty() ? 0.0 : r.result.relative_distance.front();
  j["final_train_loss"] = tail_mean(r.result.train_loss, 10);
  j["test_loss"] = r.test.loss;
  j["test_accuracy"] = r.test.accuracy;
  j["clipped_contributions"] = r.result.clipped;
  return j;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

const bool robust_registered = register_command(
    "robust",
    "Byzantine-robust averaging: 1-7 of 16 simulated peers attack a real Fashion-MNIST training, with and "
    "without CenteredClip (docs/trust.md)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<RobustArgs>();
      sub.add_option("scenario", a->scenario, "scenario JSON file (default: scenarios/robust/fashion-mnist-16.json)");
      sub.add_option("--attacks", a->attacks, "attacks to run (default: all)")
          ->delimiter(',')
          ->check(CLI::IsMember(core::names_of(sim::kAttackNames)));
      sub.add_option("--attackers", a->attackers, "attacker counts, comma-separated")
          ->delimiter(',')
          ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
          ->capture_default_str();
      sub.add_option("--steps", a->steps, "optimizer steps per run")->check(CLI::Range(1, 1'000'000))->capture_default_str();
      sub.add_option("--lr", a->lr, "SGD learning rate")->check(Positive(1e3, "a learning rate"))->capture_default_str();
      sub.add_option("--tau", a->tau, "CenteredClip radius (default: the scenario's)")->check(Positive(1e12, "a clip radius"));
      sub.add_option("--iterations", a->iterations, "CenteredClip iterations (default: the scenario's)")
          ->check(CLI::Range(1, 1000));
      sub.add_option("--data", a->data, "the Fashion-MNIST folder (default: Debian's dataset-fashion-mnist)");
      sub.add_option("--out", a->out, "write robustness.json, robustness.csv, loss.csv and robustness.png here");
      sub.add_flag("--json", a->json, "print JSON");
      return [a] {
        const std::string path =
            a->scenario.empty() ? find_data_dir("scenarios/robust") + "/fashion-mnist-16.json" : a->scenario;
        const scenarios::Scenario sc = scenarios::load_scenario(path);
        const std::size_t n = sc.peers.size();
        for (std::size_t m : a->attackers)
          if (m >= n)
            throw core::InputError("command line", "--attackers",
                                   "expected fewer attackers than the scenario's " + std::to_string(n) + " peers, got " +
                                       std::to_string(m));
        core::averaging::CenteredClip clip = sc.averaging.centered_clip.value_or(core::averaging::CenteredClip{});
        if (a->tau > 0) clip.tau = a->tau;
        if (a->iterations > 0) clip.iterations = a->iterations;
        if (!a->out.empty()) prepare_out_dir(a->out, "--out");

        const learn::LabelledImages train = learn::load_fashion_mnist(learn::Split::Train, a->data);
        const learn::LabelledImages test_images = learn::load_fashion_mnist(learn::Split::Test, a->data);
        const learn::SoftmaxRegression model(train), test(test_images);
        if (sc.workload.parameters != model.parameter_count())
          throw core::InputError(sc.source, "workload.parameters",
                                 "expected " + std::to_string(model.parameter_count()) +
                                     " (softmax regression on the dataset's images, 10 classes), got " +
                                     std::to_string(sc.workload.parameters));
        sim::RobustnessModel m;
        m.initial.assign(model.parameter_count(), 0.0f);
        m.samples = static_cast<std::uint32_t>(model.sample_count());
        m.gradient = [&model](std::span<const float> p, std::span<const std::uint32_t> idx, std::span<float> g) {
          return model.gradient(p, idx, g);
        };

        std::vector<sim::Attack> attacks;
        for (const auto& name : a->attacks) attacks.push_back(*core::parse_name(sim::kAttackNames, name));
        if (attacks.empty())
          for (const auto& entry : sim::kAttackNames) attacks.push_back(entry.value);

        std::vector<Run> runs;
        const auto run = [&](std::optional<sim::Attack> attack, std::size_t attackers, bool with_clip) {
          sim::RobustnessSetup s;
          s.attackers = attackers;
          if (attack) s.attack = *attack;
          s.steps = a->steps;
          s.learning_rate = a->lr;
          if (with_clip) s.clip = clip;
          else s.no_clip = true;
          Run r;
          r.attack = attack ? std::string(sim::name(*attack)) : "none";
          r.attackers = attackers;
          r.clip = with_clip;
          r.result = sim::run_robustness(sc, m, s);
          r.test = test.evaluate(r.result.parameters);
          if (!a->json)
            std::fprintf(stderr, "%-17s %2zu/%zu %-5s distance %8.4f  loss %8.4f  test accuracy %5.1f%%\n", r.attack.c_str(),
                         attackers, n, with_clip ? "clip" : "mean", r.result.mean_relative_distance(),
                         tail_mean(r.result.train_loss, 10), 100 * r.test.accuracy);
          runs.push_back(std::move(r));
        };
        for (const bool c : {false, true}) run(std::nullopt, 0, c);
        for (sim::Attack attack : attacks)
          for (std::size_t k : a->attackers)
            for (const bool c : {false, true}) run(attack, k, c);

        nlohmann::ordered_json j;
        j["scenario"] = sc.name;
        j["peers"] = n;
        j["steps"] = a->steps;
        j["learning_rate"] = a->lr;
        j["centered_clip"] = {{"tau", clip.tau}, {"iterations", clip.iterations}};
        j["runs"] = nlohmann::ordered_json::array();
        for (const Run& r : runs) j["runs"].push_back(to_json(r));

        if (!a->out.empty()) {
          write_json_file(std::filesystem::path(a->out) / "robustness.json", j);
          std::ofstream csv(std::filesystem::path(a->out) / "robustness.csv");
          csv << "attack,attackers,centered_clip,steps,mean_relative_distance,first_relative_distance,final_train_loss,"
                 "test_loss,test_accuracy,clipped_contributions\n";
          for (const auto& r : j["runs"])
            csv << r["attack"].get<std::string>() << ',' << r["attackers"].get<std::size_t>() << ','
                << (r["centered_clip"].get<bool>() ? 1 : 0) << ',' << r["steps"].get<std::uint64_t>() << ','
                << number(r["mean_relative_distance"].get<double>()) << ',' << number(r["first_relative_distance"].get<double>()) << ','
                << number(r["final_train_loss"].get<double>()) << ',' << number(r["test_loss"].get<double>()) << ',' << number(r["test_accuracy"].get<double>()) << ','
                << r["clipped_contributions"].get<std::uint64_t>() << "\n";
          std::ofstream loss(std::filesystem::path(a->out) / "loss.csv");
          loss << "attack,attackers,centered_clip,step,train_loss,relative_distance\n";
          for (const Run& r : runs)
            for (std::size_t s = 0; s < r.result.train_loss.size(); ++s)
              loss << r.attack << ',' << r.attackers << ',' << (r.clip ? 1 : 0) << ',' << s + 1 << ','
                   << number(r.result.train_loss[s]) << ',' << number(r.result.relative_distance[s]) << "\n";
          csv.close();
          loss.close();
          if (!csv || !loss) throw std::runtime_error("cannot write the CSV files in " + a->out);
          const int rc = run_analysis_script("plot_robustness.py", {a->out + "/robustness.csv", a->out + "/loss.csv",
                                                                    a->out + "/robustness.png"});
          j["plot"] = rc == 0   ? "plot written to " + a->out + "/robustness.png"
                      : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                                : "plot failed: analysis/plot_robustness.py exited with status " + std::to_string(rc);
        }
        if (a->json) {
          std::cout << j.dump(2) << "\n";
          return kExitOk;
        }
        std::printf("%s: %zu peers, %llu steps, SGD lr %g; CenteredClip tau %g, %u iterations\n", sc.name.c_str(), n,
                    static_cast<unsigned long long>(a->steps), a->lr, clip.tau, clip.iterations);
        std::printf("distance: mean over rounds of |average - honest mean| / |honest mean|\n\n");
        std::printf("%-17s %9s | %10s %10s | %10s %10s | %9s %9s\n", "attack", "attackers", "dist mean", "dist clip",
                    "loss mean", "loss clip", "acc mean", "acc clip");
        for (std::size_t i = 0; i + 1 < runs.size(); i += 2) {
          const Run &mean = runs[i], &clipped = runs[i + 1];
          std::printf("%-17s %6zu/%zu | %10.4f %10.4f | %10.4f %10.4f | %8.1f%% %8.1f%%\n", mean.attack.c_str(),
                      mean.attackers, n, mean.result.mean_relative_distance(), clipped.result.mean_relative_distance(),
                      tail_mean(mean.result.train_loss, 10), tail_mean(clipped.result.train_loss, 10),
                      100 * mean.test.accuracy, 100 * clipped.test.accuracy);
        }
        if (j.contains("plot")) std::printf("\n%s\n", j["plot"].get<std::string>().c_str());
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
