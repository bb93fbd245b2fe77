// Malformed scenario files (tests/scenarios/bad/): every one is rejected with a core::InputError
// whose message names the file, the location (JSON path, line/column, or trace line) and what was
// expected. Nothing crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>

#include "core/input_error.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::scenarios {
namespace {

using ::testing::HasSubstr;

const std::string kBad = std::string(SWARMLAB_SOURCE_DIR) + "/tests/scenarios/bad/";

struct BadScenario {
  const char* file;                   // under tests/scenarios/bad/
  const char* location;               // exact InputError::location()
  const char* expectation;            // substring of the message
  const char* reported_in = nullptr;  // the file the error names, when not `file` (a trace)
};

class BadScenarioFile : public ::testing::TestWithParam<BadScenario> {};

TEST_P(BadScenarioFile, ReportsFileLocationAndExpectation) {
  const BadScenario& c = GetParam();
  const std::string path = kBad + c.file;
  const std::string reported = kBad + (c.reported_in ? c.reported_in : c.file);
  try {
    load_scenario(path);
    FAIL() << c.file << ": expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), reported) << e.what();
    EXPECT_EQ(e.location(), c.location) << e.what();
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr(reported));
    EXPECT_THAT(message, HasSubstr(c.location));
    EXPECT_THAT(message, HasSubstr(c.expectation));
    for (const char ch : message)  // messages stay printable even for binary input
      EXPECT_TRUE(ch == '\n' ||
                  (static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7f))
          << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, BadScenarioFile,
    ::testing::Values(
        BadScenario{"negative_bandwidth.json", "peers[1].upload_bps",
                    "expected a non-negative number of bits/s, got -5"},
        BadScenario{
            "wrong_type.json", "workload.parameters",
            "expected a positive number of parameters (an integer from 1 to 1000000000000), got the string \"lots\""},
        BadScenario{"missing_field.json", "peers[0].compute_sps",
                    "missing required field: expected a non-negative number of samples/s"},
        BadScenario{
            "unknown_field.json", "peers[1].uplaod_bps",
            "unknown field \"uplaod_bps\" in a peer object; did you mean \"upload_bps\"? (allowed fields: "
            "bandwidth_bps, compute_sps, count, download_bps, failure_rate, join_s, latency_ms, leave_s, "
            "max_micro_batch, name, nat, reachability, upload_bps)"},
        BadScenario{"unknown_section.json", "optimizer",
                    "unknown field \"optimizer\" in a scenario (allowed fields: auth, averaging, bandwidth_trace, "
                    "churn_trace, description, dht, failures, name, nat_traversal, pair_caps, peers, seed, training, "
                    "workload)"},
        BadScenario{"empty_peers.json", "peers", "expected at least one peer, got an empty array"},
        BadScenario{"centered_clip_zero_tau.json", "averaging.centered_clip.tau", "expected a positive clip radius"},
        BadScenario{"centered_clip_iterations.json", "averaging.centered_clip.iterations", "1 to 1000 iterations"},
        BadScenario{"centered_clip_cost.json", "averaging.centered_clip.iteration_s_per_value",
                    "at most 1 ms of CPU per value"},
        BadScenario{"centered_clip_negative_cost.json", "averaging.centered_clip.median_s_per_value",
                    "seconds of CPU per value"},
        BadScenario{"nat_on_public.json", "peers[0].nat", "only a peer with reachability \"client\" is behind NAT"},
        BadScenario{"nat_unknown_type.json", "peers[1].nat", "expected one of \"cone\", \"symmetric\""},
        BadScenario{"relay_behind_nat.json", "nat_traversal.relays[1]",
                    "expected public peers (a relay accepts connections), got the client peer \"home-0\""},
        BadScenario{"relay_twice.json", "nat_traversal.relays[1]", "is named twice: expected each relay once"},
        BadScenario{"relays_not_a_list.json", "nat_traversal.relays", "expected \"public\" or an array of public peer"},
        BadScenario{"cone_share.json", "nat_traversal.cone_share", "expected a share between 0 and 1, got 1.5"},
        BadScenario{"truncated.json", "line 5, column 1",
                    "expected valid JSON: syntax error while parsing object key - unexpected end of input"},
        BadScenario{"duplicate_names.json", "peers[1].name",
                    "duplicate peer name \"gpu-2\" (already defined by peers[0]): expected unique names"},
        BadScenario{"unknown_cap_peer.json", "pair_caps[1].to",
                    "unknown peer \"gpu-9\": expected the name of a peer or peer group (peers: gpu-0, gpu-1, "
                    "gpu-2, gpu-3; groups: gpu); did you mean \"gpu-0\"?"},
        BadScenario{"zero_count.json", "peers[1].count",
                    "expected a positive number of peers in the group (an integer from 1 to 100000), got 0"},
        BadScenario{"zero_target_batch.json", "workload.target_batch",
                    "expected a positive number of samples per step (an integer from 1 to 1000000000000), got 0"},
        BadScenario{"byte_units.json", "peers[0].bandwidth_bps",
                    "unknown unit \"MB/s\" (byte units are not accepted: write bits, e.g. Mb/s)"},
        BadScenario{"bad_unit.json", "peers[0].latency_ms",
                    "expected a non-negative duration (a number, or a number with a unit: ms, s, min, h, d), "
                    "got \"5 parsecs\": unknown unit \"parsecs\""},
        BadScenario{"nan_literal.json", "line 4, column 44",
                    "expected valid JSON: syntax error while parsing value - invalid literal"},
        BadScenario{"infinite_bandwidth.json", "peers[0].bandwidth_bps", "got \"inf Gb/s\" (not finite)"},
        BadScenario{"number_overflow.json", "line 4, column 66",
                    "expected valid JSON with numbers in range: number overflow parsing '1e400'"},
        BadScenario{"binary.json", "line 1, column 1",
                    "expected UTF-8 text, found the invalid byte 0x89 (is this a binary file?)"},
        BadScenario{"latin1_name.json", "line 2, column 15",
                    "expected UTF-8 text, found the invalid byte 0xE9"},
        BadScenario{
            "bandwidth_combined.json", "peers[0].upload_bps",
            "cannot be combined with bandwidth_bps: expected either bandwidth_bps (symmetric) or both "
            "download_bps and upload_bps"},
        BadScenario{"upload_without_download.json", "peers[0].download_bps",
                    "missing required field: upload_bps is given, so download_bps is expected too"},
        BadScenario{"duplicate_key.json", "peers[1].compute_sps",
                    "duplicate field: expected each field once per object"},
        BadScenario{"missing_trace.json", "churn_trace",
                    "expected a readable trace file (paths are relative to the scenario's folder), got "
                    "\"no_such_trace.csv\""},
        BadScenario{
            "trace_unknown_peer.json", "line 4",
            "column peer: unknown peer \"gpu-2\": expected one of the scenario's peers (gpu-0, gpu-1)",
            "trace_unknown_peer.csv"},
        BadScenario{"bandwidth_trace_negative.json", "line 3",
                    "column upload_bps: expected a number of bits/s from 1000 to 10000000000000, got -1e6",
                    "bandwidth_trace_negative.csv"},
        BadScenario{"bad_enum.json", "workload.wire_precision",
                    "expected one of \"fp32\", \"fp16\", \"fp16-scaled\", \"uint8\", got the string \"fp8\""},
        BadScenario{"bad_coordination.json", "training.coordination",
                    "expected one of \"oracle\", \"dht\", got the string \"gossip\""},
        // The simulator's global-view coordinator is called "oracle" (sim/binding/oracle.h).
        BadScenario{"coordination_exact.json", "training.coordination",
                    "expected one of \"oracle\", \"dht\", got the string \"exact\""},
        BadScenario{"leave_before_join.json", "peers[1].leave_s",
                    "expected a time after join_s (7200 s), got 3600 s"},
        BadScenario{"failure_rate_too_high.json", "peers[0].failure_rate",
                    "expected a probability between 0 and 1, got 1.5"},
        BadScenario{"zero_micro_batch.json", "peers[0].max_micro_batch",
                    "expected a positive number of samples per forward/backward pass (an integer from 1 to 1000000000000), got 0"},
        BadScenario{"client_ps.json", "averaging.ps_peer",
                    "expected a public peer (a parameter server accepts connections), got the client peer "
                    "\"laptop\""},
        BadScenario{"no_public_peer.json", "peers",
                    "expected at least one peer with reachability \"public\""},
        BadScenario{"no_compute.json", "peers", "expected at least one peer with compute_sps > 0"},
        BadScenario{"negative_seed.json", "seed", "expected a seed (a non-negative integer), got -1"},
        BadScenario{"not_an_object.json", "top level",
                    "expected a scenario object {name, workload, peers, ...}, got an array"},
        BadScenario{"bad_peer_name.json", "peers[0].name",
                    "expected a peer name of 1 to 128 characters from A-Z a-z 0-9 . _ -, not \".\" or \"..\", got \"gpu one\""},
        BadScenario{"cap_to_self.json", "pair_caps[0].to", "expected a peer other than \"from\""},
        BadScenario{
            "duplicate_cap.json", "pair_caps[1]",
            "duplicate cap for us-1 -> eu-0 (already capped by pair_caps[0]): expected one cap per pair"}),
    [](const auto& info) {
      std::string name = info.param.file;
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(BadScenarioFile, MissingFile) {
  const std::string path = kBad + "does_not_exist.json";
  try {
    load_scenario(path);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("cannot open file: it does not exist (expected a readable file)"));
  }
}

TEST(BadScenarioFile, DirectoryInsteadOfFile) {
  try {
    load_scenario(kBad);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("it is a directory (expected a readable file)"));
  }
}

// Every prefix of a valid scenario is rejected cleanly (no crash, always an InputError).
TEST(BadScenarioText, EveryTruncationIsAnInputError) {
  const std::string text =
      R"({"name": "t", "seed": 3, "workload": {"model": "m", "parameters": 10, "target_batch": 4},
    "peers": [{"name": "g", "count": 2, "compute_sps": 1, "bandwidth_bps": "1 Gb/s", "latency_ms": 5}],
    "pair_caps": [{"from": "g-0", "to": "g-1", "bps": 1e6}], "averaging": {"strategy": "ar"}})";
  ASSERT_NO_THROW(parse_scenario(text, "t.json"));
  for (std::size_t n = 0; n < text.size(); ++n)
    EXPECT_THROW(parse_scenario(text.substr(0, n), "t.json"), core::InputError) << n;
}

// Garbage of every byte value: always an InputError.
TEST(BadScenarioText, ArbitraryBytesAreInputErrors) {
  std::uint64_t x = 12345;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int i = 0; i < 64; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text += static_cast<char>(x >> 56);
    }
    EXPECT_THROW(parse_scenario(text, "garbage.json"), core::InputError);
  }
}

TEST(BadScenarioText, WrongTypesEverywhere) {
  const auto message = [](const std::string& text) {
    try {
      parse_scenario(text, "w.json");
    } catch (const core::InputError& e) {
      return std::string(e.location()) + " | " + e.what();
    }
    return std::string("no error");
  };
  const std::string w = R"("workload": {"model": "m", "parameters": 10, "target_batch": 4})";
  const std::string p = R"("peers": [{"name": "g", "compute_sps": 1, "bandwidth_bps": 1e9}])";
  EXPECT_THAT(message(R"({"name": 5, )" + w + ", " + p + "}"),
              HasSubstr("name | w.json: name: expected a non-empty string, got 5"));
  EXPECT_THAT(message(R"({"name": "", )" + w + ", " + p + "}"),
              HasSubstr("expected a non-empty string, got \"\""));
  EXPECT_THAT(message(R"({"name": "n", "workload": [], )" + p + "}"),
              HasSubstr("workload | w.json: workload: expected a workload object, got an array"));
  EXPECT_THAT(message(R"({"name": "n", )" + w + R"(, "peers": {}})"),
              HasSubstr("peers | w.json: peers: expected a non-empty array of peer objects, got an object"));
  EXPECT_THAT(message(R"({"name": "n", )" + w + R"(, "peers": [7]})"),
              HasSubstr("peers[0] | w.json: peers[0]: expected a peer object, got 7"));
  EXPECT_THAT(message(R"({"name": "n", )" + w +
                      R"(, "peers": [{"name": "g", "compute_sps": true, "bandwidth_bps": 1000}]})"),
              HasSubstr("peers[0].compute_sps | w.json: peers[0].compute_sps: expected a non-negative number "
                        "of samples/s, got true"));
  EXPECT_THAT(
      message(R"({"name": "n", )" + w +
              R"(, "peers": [{"name": "g", "compute_sps": 1, "bandwidth_bps": null}]})"),
      HasSubstr("peers[0].bandwidth_bps: expected a non-negative number of bits/s or a string with a unit"));
  EXPECT_THAT(message(R"({"name": "n", )" + w +
                      R"(, "peers": [{"name": "g", "count": 2.5, "compute_sps": 1, "bandwidth_bps": 1000}]})"),
              HasSubstr("peers[0].count: expected a positive number of peers in the group (an integer from 1 "
                        "to 100000), got 2.5"));
  EXPECT_THAT(message(R"({"name": "n", )" + w + ", " + p + R"(, "pair_caps": {}})"),
              HasSubstr("pair_caps: expected an array"));
  EXPECT_THAT(
      message(R"({"name": "n", )" + w + ", " + p + R"(, "averaging": {"rounds": 0}})"),
      HasSubstr(
          "averaging.rounds: expected a positive number of rounds (an integer from 1 to 1000000), got 0"));
  EXPECT_THAT(
      message(R"({"name": "n", )" + w + ", " + p + R"(, "averaging": {"strategy": "AR"}})"),
      HasSubstr("averaging.strategy: expected one of \"ar\", \"ps\", \"ours\", \"hd\", got the string \"AR\""));
  EXPECT_THAT(message(R"({"name": "n", )" + w + ", " + p + R"(, "averaging": {"part_bytes": -1}})"),
              HasSubstr("averaging.part_bytes: expected a positive part size in bytes"));
  EXPECT_THAT(message(R"({"name": "n", )" + w + ", " + p + R"(, "churn_trace": 3})"),
              HasSubstr("churn_trace: expected a non-empty string, got 3"));
  EXPECT_THAT(message(R"({"name": "n", )" + p + "}"),
              HasSubstr("workload | w.json: workload: missing required field"));
  EXPECT_THAT(message(R"({"name": "n", )" + w + ", " + p + R"(, "peers": []})"),
              HasSubstr("peers: duplicate field"));
  EXPECT_THAT(
      message(
          R"({"name": "n", )" + w +
          R"(, "peers": [{"name": "g", "count": 2, "compute_sps": 1, "bandwidth_bps": 1000}], "averaging": {"ps_peer": "g"}})"),
      HasSubstr("averaging.ps_peer: expected the name of a single peer, got the group \"g\""));
  EXPECT_THAT(
      message(R"({"name": "n", )" + w +
              R"(, "peers": [{"name": "g", "count": 2000000, "compute_sps": 1, "bandwidth_bps": 1000}]})"),
      HasSubstr("peers[0].count: expected a positive number of peers in the group (an integer from 1 to "
                "100000), got 2000000"));
  EXPECT_THAT(message(""), HasSubstr("line 1, column 1 | w.json: line 1, column 1: expected valid JSON"));
}

}  // namespace
}  // namespace swarmlab::scenarios
