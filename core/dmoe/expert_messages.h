#pragma once
// Messages between trainers and expert runtimes (docs/learning-at-home.md §4). Layout (core/wire.h,
// little-endian), every message starting with u8 service (Experts) | u8 kind | u64 request_id:
//   Forward:  uid | tensor input
//   Backward: uid | tensor input | tensor grad_output
//   Output:   tensor (Forward: the expert's output; Backward: the gradient for its input)
//   Error:    u8 code
// uid:    varint count (1..kMaxGridDims) | varint coordinate (< kMaxGridSide) each
// tensor: varint rows | varint cols | u8 virtual (0 or 1) | rows × cols f32 when not virtual
// A virtual tensor's rows × cols × 4 bytes are the message's virtual bytes (the sum over its
// virtual tensors), so the simulator charges what the live mode would carry.
#include <cstdint>
#include <optional>

#include "core/dmoe/expert_grid.h"
#include "core/dmoe/tensor.h"
#include "core/message.h"

namespace swarmlab::core::dmoe {

enum class ExpertKind : std::uint8_t { Forward = 1, Backward = 2, Output = 3, Error = 4 };

// Why a runtime refused a request.
enum class ExpertError : std::uint8_t {
  UnknownExpert = 1,  // not hosted here (any more)
  BadShape = 2,       // wrong width, rows that disagree, no rows, or values where sizes were expected
  NonFinite = 3,      // NaN or infinity in a carried tensor
  Overloaded = 4,     // the runtime's queue is full
};
const char* expert_error_name(ExpertError e);

struct ExpertMessage {
  ExpertKind kind = ExpertKind::Forward;
  std::uint64_t request_id = 0;
  ExpertUid uid;            // Forward, Backward
  Tensor tensor;            // Forward, Backward: the input; Output: the result
  Tensor grad_output;       // Backward
  ExpertError error = ExpertError::UnknownExpert;  // Error
};

Message encode_expert(const ExpertMessage& m);
// Throws core::DecodeError on malformed input: wrong service or kind, truncated, trailing bytes, a
// uid or tensor beyond the limits, virtual bytes that disagree with the virtual tensors.
ExpertMessage decode_expert(const Message& message);
// The same, for handlers that count and drop what is malformed: nullopt instead of the throw.
std::optional<ExpertMessage> try_decode_expert(const Message& message);

}  // namespace swarmlab::core::dmoe
