// libFuzzer target for the expert protocol's messages (tests/fuzz/run_fuzz.sh dmoe builds and runs
// it; core/dmoe/expert_messages.h).
//
// Each input is a message as tests/fuzz/fuzz_message.h says (its bytes and a claimed virtual
// payload). It is (1) decoded on its own: decode_expert() must either throw DecodeError or return a
// message that encodes back to the same bytes and virtual bytes; and (2) delivered, as it arrived
// from the network, to a running expert runtime (peer 0, linear experts with values, a small queue)
// from two trainers, and to a trainer's ExpertClient (peer 1) with requests pending at the runtime
// and at a peer that never answers, from the runtime and from that peer. The world then runs on
// (batches compute, replies travel, timeouts fire). Nothing may throw; every pending request must
// have been called back exactly once; and the runtime must still answer a genuine forward request
// with x·W of the expert's current weights. (3) The same bytes, read as the expert grid's DHT
// records (core/dmoe/expert_grid.h): a coordinate subkey, a runtime subkey and, after a first byte
// that picks the grid's side, a leaf's coordinates. Each either decodes to nothing or to a value in
// range that encodes back to the same bytes. Sanitizers catch the rest.
//
// Built with -DDMOE_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "core/dmoe/expert_client.h"
#include "core/dmoe/expert_messages.h"
#include "core/dmoe/expert_runtime.h"
#include "core/wire.h"
#include "dmoe/linear_expert_backend.h"
#include "support/memory_world.h"
#include "support/recording_service.h"
#include "tests/fuzz/fuzz_message.h"

namespace {

using namespace swarmlab::core;
using namespace swarmlab::core::dmoe;

constexpr std::uint32_t kIn = 4, kOut = 3;
const ExpertUid kUid{1, 2};
const ExpertUid kOther{3, 0};

Tensor values(std::uint32_t rows, std::uint32_t cols, float seed) {
  Tensor t = Tensor::zeros(rows, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = seed + 0.5f * static_cast<float>(i % 3);
  return t;
}

RuntimeConfig runtime_config() {
  RuntimeConfig c;
  c.max_batch_rows = 16;
  c.max_queued_requests = 4;
  return c;
}

// Peer 0: the runtime. Peer 1: a trainer whose client has requests pending (ids 1 to 4): two at
// the runtime, answered as the world runs, and two at peer 2, which never answers (it records).
struct World {
  World() {
    world.env(0).set_sink(&runtime);
    world.env(1).set_sink(&client);
    world.env(2).set_sink(&silent);
    runtime.host(kUid);
    runtime.host(kOther);
    client.forward(0, kUid, values(2, kIn, 0.5f), kOut, done(1));                             // id 1
    client.backward(0, kUid, values(2, kIn, 0.5f), values(2, kOut, -1.0f), kIn, done(2));   // id 2
    client.forward(2, kUid, values(1, kIn, 1.0f), kOut, done(3));                             // id 3
    client.forward(2, kOther, Tensor::sized(3, kIn), kOut, done(4));                          // id 4
  }
  ~World() {
    for (PeerId p = 0; p < world.size(); ++p) world.env(p).set_sink(nullptr);
  }
  ExpertClient::Done done(std::uint64_t id) {
    return [this, id](ExpertClient::Result) { ++calls[id]; };
  }

  testing::MemoryWorld world{std::vector<testing::PeerSpec>{{0.01, 0, 1000}, {0.01, 0, 0}, {0.01, 0, 0}}};
  testing::LinearExpertBackend backend{world.env(0), kIn, kOut};
  ExpertRuntime runtime{world.env(0), ExpertGrid{"ffn", 2, 4}, backend, runtime_config()};
  ExpertClient client{world.env(1), ClientConfig{1.0, 2.0}};
  testing::RecordingService silent;
  std::map<std::uint64_t, int> calls;
};

void check_round_trip(const Message& m) {
  ExpertMessage decoded;
  try {
    decoded = decode_expert(m);
  } catch (const DecodeError&) {
    return;
  }
  const Message again = encode_expert(decoded);
  if (again.bytes != m.bytes || again.virtual_bytes != m.virtual_bytes) std::abort();
}

// The grid's DHT records are read from whatever the DHT returns (beam search, ExpertKeeper).
void check_grid_records(std::span<const std::uint8_t> bytes) {
  auto same = [&](const std::vector<std::uint8_t>& again, std::span<const std::uint8_t> in) {
    return std::equal(again.begin(), again.end(), in.begin(), in.end());
  };
  if (const auto c = parse_coordinate_subkey(bytes)) {
    if (*c >= kMaxGridSide || !same(coordinate_subkey(*c), bytes)) std::abort();
  }
  if (const auto r = decode_runtime(bytes)) {
    if (!same(encode_runtime(*r), bytes)) std::abort();
  }
  if (bytes.empty()) return;
  const std::uint32_t side = 1 + bytes[0] % 64;
  const std::span<const std::uint8_t> rest = bytes.subspan(1);
  if (const auto coords = decode_coordinates(rest, side)) {
    if (coords->empty() || coords->size() > side || coords->back() >= side) std::abort();
    for (std::size_t i = 1; i < coords->size(); ++i)
      if ((*coords)[i] <= (*coords)[i - 1]) std::abort();
    if (!same(encode_coordinates(*coords), rest)) std::abort();
  }
}

bool finite(const Tensor& t) {
  for (const float v : t.values)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

#ifndef DMOE_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_grid_records(std::span<const std::uint8_t>(data, size));
  const auto fuzzed = swarmlab::fuzz::message_from_fuzz(std::span<const std::uint8_t>(data, size));
  if (!fuzzed) return 0;
  const Message& m = *fuzzed;
  check_round_trip(m);

  World w;
  w.runtime.handle(1, m);
  w.runtime.handle(2, m);
  w.client.handle(0, m);
  w.client.handle(2, m);
  w.world.run();  // batches, replies, timeouts

  // Every request was called back once, whatever came in between.
  for (std::uint64_t id = 1; id <= 4; ++id)
    if (w.calls[id] != 1) std::abort();
  if (w.client.pending() != 0 || w.runtime.queued() != 0) std::abort();

  // The runtime still serves: a genuine forward gets x·W with the expert's weights as they are now
  // (a fuzzed backward may have trained them, even to non-finite values, which the client refuses).
  std::optional<ExpertClient::Result> answer;
  const Tensor x = values(2, kIn, 0.25f);
  w.client.forward(0, kOther, x, kOut, [&](ExpertClient::Result r) { answer = std::move(r); });
  w.world.run();
  if (!answer) std::abort();
  const Tensor expected = testing::LinearExpertBackend::matmul(x, w.backend.weights(kOther), kOut);
  if (answer->output) {
    if (!(*answer->output == expected) && finite(expected)) std::abort();
  } else if (answer->failure != CallFailure::BadReply || finite(expected)) {
    std::abort();
  }
  return 0;
}

#else

#include <string>

#include "tests/fuzz/corpus_writer.h"

// One seed per message kind and shape, as tests/fuzz/fuzz_message.h frames them, with uids, shapes
// and request ids that match the world's experts and pending requests.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  auto framed = [](const Message& m) {
    std::vector<std::uint8_t> out;
    if (m.virtual_bytes) {
      out = {1, static_cast<std::uint8_t>(m.virtual_bytes), static_cast<std::uint8_t>(m.virtual_bytes >> 8),
             static_cast<std::uint8_t>(m.virtual_bytes >> 16), static_cast<std::uint8_t>(m.virtual_bytes >> 24)};
    } else {
      out = {0};
    }
    out.insert(out.end(), m.bytes.begin(), m.bytes.end());
    return out;
  };
  auto write = [&](const std::string& name, const ExpertMessage& m) { corpus.write(name, framed(encode_expert(m))); };

  ExpertMessage m;
  m.kind = ExpertKind::Forward;
  m.request_id = 7;
  m.uid = kUid;
  m.tensor = values(2, kIn, 0.5f);
  write("forward", m);
  m.tensor = Tensor::sized(2, kIn);
  write("forward_virtual", m);
  m.uid = {0, 0};
  m.tensor = values(1, kIn, 0.5f);
  write("forward_unknown_expert", m);
  m.uid = kOther;
  m.tensor.values[1] = std::nanf("");
  write("forward_nan", m);

  m = {};
  m.kind = ExpertKind::Backward;
  m.request_id = 8;
  m.uid = kOther;
  m.tensor = values(3, kIn, -0.5f);
  m.grad_output = values(3, kOut, 2.0f);
  write("backward", m);
  m.grad_output = values(2, kOut, 2.0f);
  write("backward_rows_disagree", m);

  m = {};
  m.kind = ExpertKind::Output;
  m.request_id = 1;  // the forward pending at the runtime
  m.tensor = values(2, kOut, 1.0f);
  write("output", m);
  m.request_id = 4;  // the sizes-only forward pending at peer 2
  m.tensor = Tensor::sized(3, kOut);
  write("output_virtual", m);
  m.request_id = 2;
  m.tensor = values(2, kOut + 1, 1.0f);
  write("output_bad_shape", m);

  m = {};
  m.kind = ExpertKind::Error;
  m.request_id = 3;
  m.error = ExpertError::Overloaded;
  write("error", m);

  corpus.write("garbage", {0, 7, 9, 1, 2, 3});
  // The grid's DHT records, unframed: check_grid_records reads the input's raw bytes.
  corpus.write("grid_coordinate_subkey", coordinate_subkey(300));
  corpus.write("grid_runtime_subkey", encode_runtime(70000));
  std::vector<std::uint8_t> leaf = {15};  // a grid of side 16
  const std::vector<std::uint32_t> last = {1, 4, 9};
  const std::vector<std::uint8_t> coordinates = encode_coordinates(last);
  leaf.insert(leaf.end(), coordinates.begin(), coordinates.end());
  corpus.write("grid_leaf_coordinates", leaf);
  return corpus.done();
}

#endif
