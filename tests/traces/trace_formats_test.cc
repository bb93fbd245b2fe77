// Churn and bandwidth CSV traces: parsing, semantics and round trips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "core/input_error.h"
#include "traces/bandwidth_trace.h"
#include "traces/churn_trace.h"

namespace swarmlab::traces {
namespace {

using ::testing::HasSubstr;

TEST(ChurnTrace, ParsesCommentsBlankLinesCrlfAndBom) {
  const std::string text =
      "\xEF\xBB\xBF# made by hand\r\n"
      "\r\n"
      "peer, time_s ,state\r\n"
      "  # indented comment\r\n"
      "gpu-0,0,up\r\n"
      "gpu-1 , 0 , down\r\n"
      "\r\n"
      "gpu-0,3600.5,down\r\n"
      "gpu-1,3600.5,up";  // no final newline
  const ChurnTrace t = parse_churn_trace(text, "inline.csv");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[0], (ChurnEvent{"gpu-0", 0, true}));
  EXPECT_EQ(t.events[1], (ChurnEvent{"gpu-1", 0, false}));
  EXPECT_EQ(t.events[2], (ChurnEvent{"gpu-0", 3600.5, false}));
  EXPECT_EQ(t.events[3], (ChurnEvent{"gpu-1", 3600.5, true}));
}

TEST(ChurnTrace, HeaderOnlyIsAnEmptyTrace) {
  EXPECT_TRUE(parse_churn_trace("peer,time_s,state\n", "x.csv").empty());
}

TEST(ChurnTrace, StateBeforeFirstEventIsTheOpposite) {
  const ChurnTrace t = parse_churn_trace(
      "peer,time_s,state\nflaky,50,down\nflaky,60,up\nlate,100,up\nlate,200,down\n", "x.csv");
  EXPECT_FALSE(t.is_up("late", 0));
  EXPECT_FALSE(t.is_up("late", 99.9));
  EXPECT_TRUE(t.is_up("late", 100));  // events take effect at their time
  EXPECT_FALSE(t.is_up("late", 1e9));
  EXPECT_TRUE(t.is_up("flaky", 0));
  EXPECT_FALSE(t.is_up("flaky", 55));
  EXPECT_TRUE(t.is_up("flaky", 60));
  EXPECT_TRUE(t.is_up("never-mentioned", 55));
  EXPECT_TRUE(t.mentions("late"));
  EXPECT_FALSE(t.mentions("never-mentioned"));
}

TEST(ChurnTrace, EqualTimesAreAllowedAndApplyInFileOrder) {
  const ChurnTrace t = parse_churn_trace("peer,time_s,state\na,5,down\na,5,up\n", "x.csv");
  EXPECT_TRUE(t.is_up("a", 5));  // the later line wins
  EXPECT_TRUE(t.is_up("a", 4));  // before: the opposite of the first event (down)
}

TEST(ChurnTrace, RoundTripsExactly) {
  ChurnTrace t;
  t.events = {{"a", 0, true}, {"b", 0.1, false}, {"a", 1.0 / 3.0, false}, {"b", 99999999.875, true}};
  EXPECT_EQ(parse_churn_trace(to_csv(t), "rt.csv"), t);
}

TEST(ChurnTrace, ChecksPeerNamesAgainstKnownNames) {
  const PeerNames known{"gpu-0", "gpu-1"};
  EXPECT_NO_THROW(parse_churn_trace("peer,time_s,state\ngpu-1,0,up\n", "x.csv", &known));
  try {
    parse_churn_trace("peer,time_s,state\ngpu-0,0,up\ngpu-2,0,up\n", "x.csv", &known);
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), "x.csv");
    EXPECT_EQ(e.location(), "line 3");
    EXPECT_THAT(e.what(), HasSubstr("unknown peer \"gpu-2\""));
    EXPECT_THAT(e.what(), HasSubstr("gpu-0, gpu-1"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean"));
  }
}

TEST(BandwidthTrace, ParsesAndLooksUpTheRowInForce) {
  const BandwidthTrace t = parse_bandwidth_trace(
      "# comment\npeer,time_s,download_bps,upload_bps\nh,0,100e6,20e6\nk,10,1e9,1e9\nh,3600,5e7,1e7\n",
      "bw.csv");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[2], (BandwidthEvent{"h", 3600, 5e7, 1e7}));
  EXPECT_EQ(t.at("k", 5), nullptr);
  ASSERT_NE(t.at("h", 3599), nullptr);
  EXPECT_EQ(t.at("h", 3599)->download_bps, 100e6);
  EXPECT_EQ(t.at("h", 3600)->upload_bps, 1e7);
  EXPECT_EQ(t.at("nobody", 1e9), nullptr);
}

TEST(BandwidthTrace, RoundTripsExactly) {
  BandwidthTrace t;
  t.events = {{"a", 0, 1e8, 2e7}, {"b", 0.25, 123456789.125, 1000}, {"a", 7200, 3e9, 1.5e9}};
  EXPECT_EQ(parse_bandwidth_trace(to_csv(t), "rt.csv"), t);
}

// ---------------------------------------------------------------------------------------------
// Malformed files: each message names the file, the line and what was expected.

struct BadTrace {
  const char* file;
  bool bandwidth;           // which parser
  const char* location;     // exact InputError::location()
  const char* expectation;  // a substring of the message
};

class BadTraceFile : public ::testing::TestWithParam<BadTrace> {};

TEST_P(BadTraceFile, ReportsFileLineAndExpectation) {
  const BadTrace& c = GetParam();
  const std::string path = std::string(SWARMLAB_SOURCE_DIR) + "/tests/traces/bad/" + c.file;
  try {
    if (c.bandwidth)
      load_bandwidth_trace(path);
    else
      load_churn_trace(path);
    FAIL() << c.file << ": expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), path);
    EXPECT_EQ(e.location(), c.location) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(std::string("bad/") + c.file));
    EXPECT_THAT(e.what(), HasSubstr(c.location));
    EXPECT_THAT(e.what(), HasSubstr(c.expectation));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Traces, BadTraceFile,
    ::testing::Values(
        BadTrace{"unsorted.csv", false, "line 6",
                 "expected times in non-decreasing order, got 50 after 100 on line 5"},
        BadTrace{"bad_state.csv", false, "line 3",
                 "column state: expected \"up\" or \"down\", got \"offline\""},
        BadTrace{"extra_column.csv", false, "line 3",
                 "expected 3 comma-separated columns (peer,time_s,state), got 4"},
        BadTrace{"trailing_junk.csv", false, "line 3",
                 "column time_s: expected a number of seconds from 0 to 100000000, got \"12abc\""},
        BadTrace{"negative_time.csv", false, "line 2",
                 "expected a number of seconds from 0 to 100000000, got -3"},
        BadTrace{"nan_time.csv", false, "line 3",
                 "expected a number of seconds from 0 to 100000000, got nan"},
        BadTrace{"bad_header.csv", false, "line 1",
                 "expected the header \"peer,time_s,state\", got \"peer,time,state\""},
        BadTrace{"no_header.csv", false, "line 3",
                 "expected the header \"peer,time_s,state\" (the file has no header"},
        BadTrace{"quoted_name.csv", false, "line 2", "column peer: expected a peer name"},
        BadTrace{"binary.csv", false, "line 3, column 1", "expected UTF-8 text, found control byte 0x00"},
        BadTrace{"latin1.csv", false, "line 2, column 4", "expected UTF-8 text, found the invalid byte 0xE9"},
        BadTrace{"bandwidth_negative.csv", true, "line 3",
                 "column download_bps: expected a number of bits/s from 1000 to 10000000000000, got -5"},
        BadTrace{"bandwidth_missing_column.csv", true, "line 2", "expected 4 comma-separated columns"},
        BadTrace{"bandwidth_inf.csv", true, "line 3",
                 "column upload_bps: expected a number of bits/s from 1000 to 10000000000000, got inf"},
        BadTrace{"bandwidth_unsorted.csv", true, "line 3", "expected times in non-decreasing order"},
        BadTrace{"bandwidth_units.csv", true, "line 2", "got \"100 Mb/s\""},
        BadTrace{"no_such_file.csv", false, "", "cannot open file: it does not exist"}),
    [](const auto& info) {
      std::string name = info.param.file;
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(BadTraceFile, DirectoryIsReported) {
  const std::string path = std::string(SWARMLAB_SOURCE_DIR) + "/tests/traces/bad";
  try {
    load_churn_trace(path);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("it is a directory (expected a readable file)"));
  }
}

TEST(BadTraceText, CrInsideACellIsRejected) {
  EXPECT_THROW(parse_churn_trace("peer,time_s,state\na,0\r5,up\n", "x.csv"), core::InputError);
}

}  // namespace
}  // namespace swarmlab::traces
