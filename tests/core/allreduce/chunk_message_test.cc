#include "core/allreduce/chunk_message.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/allreduce/step_log.h"
#include "core/wire.h"

namespace swarmlab::core::allreduce {
namespace {

ChunkHeader part0() {
  ChunkHeader h;
  h.round_id = 7;
  h.step = 3;
  h.from_group = 5;
  h.part = 0;
  h.parts = 2;
  h.first_element = 100;
  h.elements = 4;
  h.codec = codec::Codec::Fp32;
  h.blocks = {{1.5, 3, true}, {2.0, 1, false}};
  return h;
}

TEST(ChunkMessage, RoundTripsRealAndVirtualParts) {
  const std::vector<float> v = {1, 2, 3, 4};
  const Message real = encode_chunk(part0(), v);
  const DecodedChunk d = decode_chunk(real);
  EXPECT_EQ(d.header.round_id, 7u);
  EXPECT_EQ(d.header.step, 3u);
  EXPECT_EQ(d.header.from_group, 5u);
  EXPECT_EQ(d.header.blocks, (std::vector<BlockTag>{{1.5, 3, true}, {2.0, 1, false}}));
  ASSERT_TRUE(d.has_payload);
  std::vector<float> out(4);
  codec::decode(codec::Codec::Fp32, d.payload, out);
  EXPECT_EQ(out, v);

  ChunkHeader h = part0();
  h.part = 1;
  h.blocks.clear();
  h.codec = codec::Codec::Fp16;
  const Message virt = encode_chunk(h, {});
  EXPECT_EQ(virt.virtual_bytes, 8u);
  EXPECT_FALSE(decode_chunk(virt).has_payload);

  ChunkHeader pull;
  pull.kind = ChunkKind::Pull;
  pull.round_id = 9;
  pull.step = 1;
  pull.from_group = 2;
  const DecodedChunk p = decode_chunk(encode_chunk(pull, {}));
  EXPECT_EQ(p.header.kind, ChunkKind::Pull);
  EXPECT_EQ(p.header.step, 1u);
}

TEST(ChunkMessage, RejectsMalformedMessages) {
  const std::vector<float> v = {1, 2, 3, 4};
  const Message good = encode_chunk(part0(), v);
  for (std::size_t n = 0; n < good.bytes.size(); ++n) {  // every truncation
    Message m;
    m.bytes.assign(good.bytes.begin(), good.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(decode_chunk(m), DecodeError) << n;
  }
  Message trailing = good;
  trailing.bytes.push_back(0);
  EXPECT_THROW(decode_chunk(trailing), DecodeError);
  Message both = good;
  both.virtual_bytes = 16;
  EXPECT_THROW(decode_chunk(both), DecodeError);
  Message kind = good;
  kind.bytes[1] = 9;
  EXPECT_THROW(decode_chunk(kind), DecodeError);
  Message service = good;
  service.bytes[0] = 2;
  EXPECT_THROW(decode_chunk(service), DecodeError);

  ChunkHeader h = part0();
  h.part = 1;
  h.blocks.clear();
  Message virt = encode_chunk(h, {});
  virt.virtual_bytes = 3;  // disagrees with the header
  EXPECT_THROW(decode_chunk(virt), DecodeError);

  h = part0();
  h.blocks[0].weight = -1.0;
  EXPECT_THROW(decode_chunk(encode_chunk(h, v)), DecodeError);
  h = part0();
  h.blocks[0].groups = 0;  // a block includes at least its own participant
  EXPECT_THROW(decode_chunk(encode_chunk(h, v)), DecodeError);
  h = part0();
  h.blocks[0].groups = 4097;
  EXPECT_THROW(decode_chunk(encode_chunk(h, v)), DecodeError);
  h = part0();
  h.blocks.clear();  // part 0 carries the block tags
  EXPECT_THROW(encode_chunk(h, v), std::logic_error);
  h = part0();
  h.part = 2;  // part >= parts
  h.blocks.clear();
  EXPECT_THROW(decode_chunk(encode_chunk(h, v)), DecodeError);
  // Found by the fuzzer: a real payload of no elements would encode back as a virtual one.
  Message empty;
  empty.bytes = {8, 1, 0, 8, 10, 1, 8, 1, 0, 0, 1};
  EXPECT_THROW(decode_chunk(empty), DecodeError);
  h = part0();
  h.step = 64;
  EXPECT_THROW(decode_chunk(encode_chunk(h, v)), DecodeError);
}

TEST(StepLog, TakesStepsInOrderAndIgnoresDuplicates) {
  StepLog log;
  std::vector<StepEntry> seen;
  log.set_on_step([&](const StepEntry& e) { seen.push_back(e); });
  EXPECT_EQ(log.apply(encode_step({1, 0, false})), (raft::Bytes{1}));
  EXPECT_EQ(log.apply(encode_step({1, 0, false})), (raft::Bytes{0}));  // a second leader's copy
  EXPECT_EQ(log.apply(encode_step({1, 2, false})), (raft::Bytes{0}));  // out of order
  EXPECT_EQ(log.apply(encode_step({1, 1, true})), (raft::Bytes{1}));
  EXPECT_EQ(log.steps_done(), 2u);
  EXPECT_EQ(log.apply(encode_step({2, 0, false})), (raft::Bytes{1}));  // the next round
  EXPECT_EQ(log.round_id(), 2u);
  EXPECT_EQ(log.steps_done(), 1u);
  EXPECT_EQ(log.apply(raft::Bytes{0xFF}), (raft::Bytes{0}));           // malformed: total, not thrown
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[1].partner_lost);
  EXPECT_EQ(log.ignored(), 3u);

  StepLog copy;
  copy.restore(log.snapshot());
  EXPECT_EQ(copy.round_id(), 2u);
  EXPECT_EQ(copy.steps_done(), 1u);
  EXPECT_THROW(copy.restore(raft::Bytes{1}), DecodeError);
  EXPECT_EQ(copy.steps_done(), 1u);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
