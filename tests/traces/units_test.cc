// Durations and bandwidths with units; the shared text helpers.
#include "traces/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "core/input_error.h"
#include "traces/text.h"

namespace swarmlab::traces {
namespace {

using ::testing::HasSubstr;

double duration(const std::string& s, double bare = 1) { return parse_duration(s, "src", "loc", bare); }
double bandwidth(const std::string& s) { return parse_bandwidth(s, "src", "loc"); }

TEST(Units, Durations) {
  EXPECT_EQ(duration("8h"), 28800);
  EXPECT_EQ(duration("8 h"), 28800);
  EXPECT_EQ(duration("90min"), 5400);
  EXPECT_EQ(duration("45s"), 45);
  EXPECT_EQ(duration("1.5d"), 129600);
  EXPECT_DOUBLE_EQ(duration("250ms"), 0.25);
  EXPECT_EQ(duration("3600"), 3600);
  EXPECT_DOUBLE_EQ(duration("5", 1e-3), 0.005);  // a bare number in the field's unit
  EXPECT_EQ(duration("2e3s"), 2000);
}

TEST(Units, Bandwidths) {
  EXPECT_EQ(bandwidth("200 Mb/s"), 200e6);
  EXPECT_EQ(bandwidth("25Gbps"), 25e9);
  EXPECT_EQ(bandwidth("1e9"), 1e9);
  EXPECT_EQ(bandwidth("100kb/s"), 1e5);
  EXPECT_EQ(bandwidth("100 Kbps"), 1e5);
  EXPECT_EQ(bandwidth("2.5 Gbit/s"), 2.5e9);
  EXPECT_EQ(bandwidth("0"), 0);
}

void expect_error(const std::function<void()>& f, const std::string& expectation) {
  try {
    f();
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), "src");
    EXPECT_EQ(e.location(), "loc");
    EXPECT_THAT(e.what(), HasSubstr(expectation));
  }
}

TEST(Units, BadValues) {
  expect_error([] { duration("8x"); }, "unknown unit \"x\"");
  expect_error([] { duration("-1h"); }, "got \"-1h\" (negative)");
  expect_error([] { duration("h"); }, "expected a non-negative duration");
  expect_error([] { duration(""); }, "got \"\"");
  expect_error([] { duration("inf h"); }, "got \"inf h\" (not finite)");
  expect_error([] { duration("1e308d"); }, "out of range");
  expect_error([] { bandwidth("100 MB/s"); }, "byte units are not accepted");
  expect_error([] { bandwidth("nan"); }, "got \"nan\" (not finite)");
  expect_error([] { bandwidth("12abc"); }, "unknown unit \"abc\"");
  expect_error([] { bandwidth("1,000"); }, "got \"1,000\"");
  expect_error([] { bandwidth("fast"); }, "expected a non-negative bandwidth");
}

TEST(Units, FormatDuration) {
  EXPECT_EQ(format_duration(28800), "8h");
  EXPECT_EQ(format_duration(604800), "168h");
  EXPECT_EQ(format_duration(5400), "90min");
  EXPECT_EQ(format_duration(90), "90s");
  EXPECT_EQ(format_duration(0.25), "250ms");
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(0.0001), "1e-04s");  // shortest exact form
  EXPECT_EQ(duration(format_duration(0.0001)), 0.0001);
}

TEST(Text, ParseRealIsStrict) {
  double v = 0;
  EXPECT_TRUE(parse_real("12", v));
  EXPECT_EQ(v, 12);
  EXPECT_TRUE(parse_real("-0.5e-3", v));
  EXPECT_FALSE(parse_real("12abc", v));
  EXPECT_FALSE(parse_real(" 12", v));
  EXPECT_FALSE(parse_real("+12", v));
  EXPECT_FALSE(parse_real("", v));
  EXPECT_FALSE(parse_real("0x10", v));
  EXPECT_FALSE(parse_real("1e999", v));
  for (double x : {0.1, 1.0 / 3.0, 1e-300, 123456789.123456789, 1e21})
    EXPECT_TRUE(parse_real(format_real(x), v) && v == x) << x;
}

TEST(Text, CheckTextFindsBinaryAndBadUtf8) {
  EXPECT_NO_THROW(check_text("plain, caf\xC3\xA9, \xF0\x9F\x98\x80\ttab\r\n", "s"));
  const auto location_of = [](std::string_view text) {
    try {
      check_text(text, "s");
    } catch (const core::InputError& e) {
      return e.location();
    }
    return std::string("none");
  };
  EXPECT_EQ(location_of("ab\ncd\xFF"), "line 2, column 3");
  EXPECT_EQ(location_of(std::string_view("a\0b", 3)), "line 1, column 2");
  EXPECT_EQ(location_of("\xC0\xAF"), "line 1, column 1");       // overlong
  EXPECT_EQ(location_of("x\xED\xA0\x80"), "line 1, column 2");  // surrogate
  EXPECT_EQ(location_of("x\xE2\x82"), "line 1, column 2");      // truncated sequence
}

TEST(Text, QuotedEscapesAndTruncates) {
  EXPECT_EQ(quoted("a\"b\\c\x01\xFF"), "\"a\\\"b\\\\c\\x01\\xFF\"");
  EXPECT_EQ(quoted(std::string(100, 'x'), 3), "\"xxx...\"");
}

TEST(Text, PeerNames) {
  EXPECT_TRUE(is_valid_peer_name("t4-200mbps-3"));
  EXPECT_TRUE(is_valid_peer_name("a.b_c"));
  EXPECT_FALSE(is_valid_peer_name(""));
  EXPECT_FALSE(is_valid_peer_name("a b"));
  EXPECT_FALSE(is_valid_peer_name("a,b"));
  EXPECT_FALSE(is_valid_peer_name(std::string(129, 'a')));
  EXPECT_EQ(edit_distance("uplaod_bps", "upload_bps"), 2u);
}

}  // namespace
}  // namespace swarmlab::traces
