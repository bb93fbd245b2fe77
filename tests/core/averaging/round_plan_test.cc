#include "core/averaging/round_plan.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/averaging/part_message.h"
#include "core/averaging/role_assignment.h"
#include "core/wire.h"

namespace swarmlab::core::averaging {
namespace {

TEST(Apportion, SplitsProportionallyAndExactly) {
  const std::vector<double> f = {0.5, 0.25, 0.25};
  const auto b = apportion(100, f);
  EXPECT_EQ(b, (std::vector<std::uint64_t>{0, 50, 75, 100}));
}

TEST(Apportion, LargestRemaindersGetTheLeftoverElements) {
  const std::vector<double> f = {1, 1, 1};
  const auto b = apportion(10, f);  // 3.33 each: the first (lowest index on ties) gets the extra one
  EXPECT_EQ(b, (std::vector<std::uint64_t>{0, 4, 7, 10}));
}

TEST(Apportion, ZeroFractionsGetNothing) {
  const std::vector<double> f = {0, 0.3, 0, 0.7};
  const auto b = apportion(7, f);
  EXPECT_EQ(b[1] - b[0], 0u);
  EXPECT_EQ(b[3] - b[2], 0u);
  EXPECT_EQ(b.back(), 7u);
}

TEST(Apportion, RejectsBadFractions) {
  const std::vector<double> zero = {0, 0};
  EXPECT_THROW(apportion(5, zero), std::invalid_argument);
  const std::vector<double> negative = {1, -1, 1};
  EXPECT_THROW(apportion(5, negative), std::invalid_argument);
}

TEST(RoundPlan, PartsFitThePartSizeAfterCompression) {
  RoundPlan p;
  p.members = {0, 1};
  p.weights = {1, 1};
  p.span_begin = {0, 1'000'000, 1'000'000};
  p.codec = codec::Codec::Fp16;
  p.part_bytes = 512 * 1024;
  EXPECT_EQ(p.elements_per_part(), 262144u);  // 512 KiB of binary16
  EXPECT_EQ(p.parts_in_span(0), 4u);          // 3 full parts and one of 213,568
  EXPECT_EQ(p.part_count(0, 3), 1'000'000u - 3 * 262144u);
  EXPECT_EQ(p.parts_in_span(1), 0u);
  EXPECT_NO_THROW(p.validate());
}

TEST(RoundPlan, ValidateRejectsInconsistentPlans) {
  RoundPlan p;
  p.members = {0, 0};
  p.weights = {1, 1};
  p.span_begin = {0, 1, 2};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // duplicate member
  p.members = {0, 1};
  p.weights = {0, 0};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // nobody sends
  p.weights = {1, 1};
  p.span_begin = {0, 2, 1};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // decreasing spans
  p.span_begin = {0, 1, 2};
  p.exchange_order = {1, 0};
  EXPECT_NO_THROW(p.validate());
  p.exchange_order = {1, 1};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // a sender twice
  p.exchange_order = {1};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // a sender left out
  p.weights = {1, 0};
  p.exchange_order = {0, 1};
  EXPECT_THROW(p.validate(), std::invalid_argument);  // member 1 sends nothing
}

TEST(RoundPlan, HalvingDoublingRanksTheSendersFastestFirst) {
  // Peer 2 computes nothing (no place); 3 and 0 are equally fast (lower index first).
  planner::PlannerInput in;
  in.peers = {{10, 1e8, 1e8, false}, {10, 5e7, 9e8, false}, {0, 1e9, 1e9, false}, {10, 2e8, 1e8, false}, {10, 4e8, 3e8, false}};
  const RoleAssignment roles = assign_roles(Strategy::HalvingDoubling, in);
  EXPECT_EQ(roles.exchange_order, (std::vector<std::size_t>{4, 0, 3, 1}));
  EXPECT_TRUE(assign_roles(Strategy::AllReduce, in).exchange_order.empty());
  // In the plan: members are 0, 1, 3, 4 (peer 2 neither sends nor reduces), so member indices.
  const RoundPlan plan = make_round_plan(7, roles, 1000, codec::Codec::Fp32);
  EXPECT_EQ(plan.members, (std::vector<PeerId>{0, 1, 3, 4}));
  EXPECT_EQ(plan.exchange_order, (std::vector<std::uint32_t>{3, 0, 2, 1}));
}

TEST(PartMessage, RoundTripsRealAndVirtualPayloads) {
  PartHeader h;
  h.kind = PartKind::Averaged;
  h.round_id = 7;
  h.part = 3;
  h.weight = 2.5;
  h.elements = 4;
  h.codec = codec::Codec::Fp32;
  const std::vector<float> v = {1, 2, 3, 4};
  const Message real = encode_part(h, v, false);
  const DecodedPart d = decode_part(real);
  EXPECT_EQ(d.header.round_id, 7u);
  EXPECT_EQ(d.header.part, 3u);
  EXPECT_EQ(d.header.weight, 2.5);
  EXPECT_TRUE(d.has_payload);
  EXPECT_EQ(d.payload.size(), 16u);

  const Message virt = encode_part(h, {}, true);
  EXPECT_EQ(virt.wire_size(), real.wire_size());  // the simulator charges exactly the real size
  EXPECT_FALSE(decode_part(virt).has_payload);
}

TEST(PartMessage, RejectsMalformedMessages) {
  PartHeader h;
  h.elements = 2;
  const std::vector<float> v = {1, 2};
  const Message good = encode_part(h, v, false);
  for (std::size_t cut = 0; cut < good.bytes.size(); ++cut) {
    Message m = good;
    m.bytes.resize(cut);
    EXPECT_THROW(decode_part(m), DecodeError) << "truncated to " << cut;
  }
  Message trailing = good;
  trailing.bytes.push_back(0);
  EXPECT_THROW(decode_part(trailing), DecodeError);
  Message bad_codec = good;
  bad_codec.bytes[1 + 1 + 8 + 4 + 8 + 4] = 99;
  EXPECT_THROW(decode_part(bad_codec), DecodeError);
  Message virtual_mismatch = encode_part(h, {}, true);
  virtual_mismatch.virtual_bytes += 1;
  EXPECT_THROW(decode_part(virtual_mismatch), DecodeError);
  Message huge = encode_part(h, {}, true);
  huge.bytes[1 + 1 + 8 + 4 + 8] = 0xFF;  // element count's low byte
  huge.bytes[1 + 1 + 8 + 4 + 8 + 3] = 0xFF;
  EXPECT_THROW(decode_part(huge), DecodeError);
}

}  // namespace
}  // namespace swarmlab::core::averaging
