// The on/off churn generator.
#include "traces/onoff_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace swarmlab::traces {
namespace {

constexpr double kHour = 3600;

TEST(OnOff, AlternatesAllPeersInStep) {
  const ChurnTrace t = make_on_off({"a", "b"}, 8 * kHour, 8 * kHour, 48 * kHour);
  ASSERT_EQ(t.events.size(), 12u);  // 6 boundaries in [0, 48h) x 2 peers
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(t.events[2 * k], (ChurnEvent{"a", k * 8 * kHour, k % 2 == 0}));
    EXPECT_EQ(t.events[2 * k + 1], (ChurnEvent{"b", k * 8 * kHour, k % 2 == 0}));
  }
  for (double h : {0.0, 7.9, 16.0, 32.0, 39.9}) EXPECT_TRUE(t.is_up("a", h * kHour)) << h;
  for (double h : {8.0, 15.9, 24.0, 40.0, 47.0, 100.0}) EXPECT_FALSE(t.is_up("b", h * kHour)) << h;
}

TEST(OnOff, StartDownAndUnequalLengths) {
  const ChurnTrace t = make_on_off({"p"}, 1 * kHour, 3 * kHour, 9 * kHour, /*start_up=*/false);
  const std::vector<ChurnEvent> expected{{"p", 0, false},
                                         {"p", 3 * kHour, true},
                                         {"p", 4 * kHour, false},
                                         {"p", 7 * kHour, true},
                                         {"p", 8 * kHour, false}};
  EXPECT_EQ(t.events, expected);
}

TEST(OnOff, PhaseShiftsTheCycle) {
  // 2 h into an (up 3 h, down 5 h) cycle: up at 0, down at 1 h, up at 6 h, down at 9 h.
  const ChurnTrace t = make_on_off({"p"}, 3 * kHour, 5 * kHour, 10 * kHour, true, 2 * kHour);
  const std::vector<ChurnEvent> expected{
      {"p", 0, true}, {"p", 1 * kHour, false}, {"p", 6 * kHour, true}, {"p", 9 * kHour, false}};
  EXPECT_EQ(t.events, expected);
  // A phase landing on a boundary starts in the second part; phases wrap modulo the period.
  EXPECT_EQ(make_on_off({"p"}, 3, 5, 4, true, 3).events.front(), (ChurnEvent{"p", 0, false}));
  EXPECT_EQ(make_on_off({"p"}, 3, 5, 20, true, 2 + 8 * 7), make_on_off({"p"}, 3, 5, 20, true, 2));
  EXPECT_EQ(make_on_off({"p"}, 3, 5, 20, true, -6), make_on_off({"p"}, 3, 5, 20, true, 2));
}

TEST(OnOff, EventsStopBeforeTheDuration) {
  const ChurnTrace t = make_on_off({"p"}, 1, 1, 4);
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events.back().time_s, 3);
}

TEST(OnOff, RoundTripsThroughCsv) {
  const ChurnTrace t = make_on_off({"t4-0", "t4-1", "t4-2"}, 8 * kHour, 8 * kHour, 168 * kHour, true, 0.1);
  EXPECT_EQ(parse_churn_trace(to_csv(t), "generated.csv"), t);
}

TEST(OnOff, ShippedAlbertTraceIsWhatTheDocumentedCommandMakes) {
  std::vector<std::string> peers;
  for (int i = 0; i < 8; ++i) peers.push_back("t4-parttime-" + std::to_string(i));
  const ChurnTrace expected = make_on_off(peers, 8 * kHour, 8 * kHour, 168 * kHour);
  EXPECT_EQ(load_churn_trace(std::string(SWARMLAB_SOURCE_DIR) + "/traces/data/albert_onoff_8h.csv"),
            expected);
}

TEST(OnOff, RejectsBadArguments) {
  EXPECT_THROW(make_on_off({}, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a", "a"}, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a b"}, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, 1, -1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, 1, 1, 0), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, std::nan(""), 1, 1), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, 1, 1, 1, true, INFINITY), std::invalid_argument);
  EXPECT_THROW(make_on_off({"a"}, 1e-3, 1e-3, 1e9), std::invalid_argument);  // too many events
}

}  // namespace
}  // namespace swarmlab::traces
