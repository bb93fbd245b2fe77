#include "core/dht/shortlist.h"

#include <gtest/gtest.h>

namespace swarmlab::core::dht {
namespace {

NodeId id_from_low(std::uint64_t low) {
  std::array<std::uint8_t, 20> b{};
  for (int i = 0; i < 8; ++i) b[19 - i] = static_cast<std::uint8_t>(low >> (8 * i));
  return NodeId::from_bytes(b);
}
Contact c(std::uint64_t low) { return Contact{id_from_low(low), static_cast<PeerId>(low)}; }

TEST(Shortlist, AsksClosestFirstWithAtMostAlphaInFlight) {
  Shortlist s(id_from_low(0), /*k=*/3, /*alpha=*/2);
  for (std::uint64_t i : {5, 1, 4, 2, 3}) EXPECT_TRUE(s.add(c(i), 1));
  EXPECT_FALSE(s.add(c(4), 2));  // known already
  ASSERT_NE(s.next(), nullptr);
  EXPECT_EQ(s.next()->contact(s.target()), c(1));
  s.sent(c(1).id);
  EXPECT_EQ(s.next()->contact(s.target()), c(2));
  s.sent(c(2).id);
  EXPECT_EQ(s.next(), nullptr);  // α reached
  s.responded(c(1).id);
  EXPECT_EQ(s.next()->contact(s.target()), c(3));
  s.sent(c(3).id);
  s.responded(c(2).id);
  // The window is the k = 3 closest: 4 and 5 are not asked while 1, 2, 3 stand.
  EXPECT_EQ(s.next(), nullptr);
  EXPECT_FALSE(s.converged());
  s.responded(c(3).id);
  EXPECT_TRUE(s.converged());
  EXPECT_EQ(s.closest_responded(2), (std::vector<Contact>{c(1), c(2)}));
}

TEST(Shortlist, FailuresWidenTheWindow) {
  Shortlist s(id_from_low(0), 2, 4);
  for (std::uint64_t i : {1, 2, 3, 4}) s.add(c(i), 1);
  s.sent(c(1).id);
  s.sent(c(2).id);
  EXPECT_EQ(s.next(), nullptr);
  s.failed(c(1).id);
  ASSERT_NE(s.next(), nullptr);
  EXPECT_EQ(s.next()->contact(s.target()), c(3));
  s.sent(c(3).id);
  s.responded(c(2).id);
  s.responded(c(3).id);
  EXPECT_TRUE(s.converged());
  EXPECT_EQ(s.closest_responded(5), (std::vector<Contact>{c(2), c(3)}));
}

TEST(Shortlist, CloserNodesLearntLaterAreAskedNext) {
  Shortlist s(id_from_low(0), 2, 1);
  s.add(c(8), 1);
  s.sent(c(8).id);
  s.add(c(3), 2);  // from 8's reply
  s.add(c(9), 2);
  s.responded(c(8).id);
  EXPECT_EQ(s.next()->contact(s.target()), c(3));
  EXPECT_EQ(s.next()->hop, 2);
  s.sent(c(3).id);
  s.responded(c(3).id);
  EXPECT_TRUE(s.converged());  // 3 and 8 are the two closest and both answered
}

TEST(Shortlist, EmptyShortlistHasConverged) {
  Shortlist s(id_from_low(0), 20, 4);
  EXPECT_TRUE(s.converged());
  EXPECT_EQ(s.next(), nullptr);
}

}  // namespace
}  // namespace swarmlab::core::dht
