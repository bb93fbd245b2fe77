// Malformed sweep specs (tests/sweep/bad/): each is rejected with a core::InputError naming the
// file, the JSON path (or line and column) and what was expected, and `swarmlab sweep` exits 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/input_error.h"
#include "sweep/spec_loader.h"
#include "sweep_test_util.h"

namespace swarmlab::sweep {
namespace {

using ::testing::HasSubstr;
using testing::kSource;

const std::string kBad = "tests/sweep/bad/";

struct BadSpec {
  const char* file;         // under tests/sweep/bad/
  const char* location;     // exact InputError::location()
  const char* expectation;  // substring of the message
};

class BadSpecFile : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecFile, ReportsFileLocationAndExpectation) {
  const BadSpec& c = GetParam();
  const std::string path = kSource + "/" + kBad + c.file;
  try {
    load_sweep_spec(path);
    FAIL() << c.file << ": expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), path) << e.what();
    EXPECT_EQ(e.location(), c.location) << e.what();
    EXPECT_THAT(std::string(e.what()), HasSubstr(c.expectation));
  }
}

TEST_P(BadSpecFile, CommandExitsTwoNamingFileAndLocation) {
  const BadSpec& c = GetParam();
  // Run from the source folder so the message names the file as given.
  const auto r = testing::shell("cd " + kSource + " && " + testing::kSwarmlab + " sweep " + kBad + c.file +
                                " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr(kBad + c.file + ": " + c.location + ": "));
  EXPECT_THAT(r.out, HasSubstr(c.expectation));
}

INSTANTIATE_TEST_SUITE_P(
    Specs, BadSpecFile,
    ::testing::Values(
        BadSpec{"missing_axes.json", "axes", "missing required field: expected a non-empty array of axis objects"},
        BadSpec{"unknown_field.json", "axis", "unknown field \"axis\" in a sweep spec; did you mean \"axes\"?"},
        BadSpec{"bad_method.json", "sampling.method",
                "expected one of \"grid\", \"random\", \"latin_hypercube\", got the string \"sobol\""},
        BadSpec{"lhs_without_count.json", "sampling.count",
                "missing required field: expected the number of points to sample"},
        BadSpec{"unknown_group.json", "axes[0].group",
                "unknown peer entry \"hom\": expected the name of an entry in the base scenario's peers "
                "(datacenter, home); did you mean \"home\"?"},
        BadSpec{"reversed_range.json", "axes[0].range[1]", "expected high >= low"},
        BadSpec{"share_above_one.json", "axes[0].values[1]", "expected a share of peers in [0, 1], got 1.5"},
        BadSpec{"unknown_strategy.json", "axes[0].values[1]",
                "expected one of \"ar\", \"ps\", \"ours\", \"hd\", got the string \"butterfly\""},
        BadSpec{"duplicate_seed.json", "seeds[2]", "duplicate seed 1: expected each seed once"},
        BadSpec{"rounds_in_training.json", "experiment.rounds", "expected no rounds in a training experiment"},
        BadSpec{"range_for_strategy.json", "axes[0].range", "a strategy axis takes a list, not a range"},
        BadSpec{"two_axes_one_setting.json", "axes[1].set",
                "this axis changes the count of home, as axes[0] does: expected one axis per setting"},
        BadSpec{"missing_base_file.json", "base", "expected a readable scenario file"},
        BadSpec{"bad_base_inline.json", "base.peers[0].bandwidth_bps",
                "expected a non-negative number of bits/s, got -1"},
        BadSpec{"truncated.json", "line 3, column 1", "expected valid JSON"},
        BadSpec{"per_peer_on_count.json", "axes[0].per_peer", "per_peer applies to compute_sps"},
        BadSpec{"reserved_name.json", "axes[0].name", "the name \"seed\" is a column of the table"},
        BadSpec{"bad_field_value.json", "axes[0].values[1]",
                "expected a value that gives a valid scenario, got 0: expected a positive number of samples per step"},
        BadSpec{"grid_range_without_levels.json", "axes[0]",
                "a range on a grid needs levels: expected \"steps\" here or \"count\" in sampling"}),
    [](const auto& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

}  // namespace
}  // namespace swarmlab::sweep
