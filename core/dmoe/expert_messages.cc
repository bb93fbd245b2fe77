#include "core/dmoe/expert_messages.h"

#include <cstring>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::dmoe {
namespace {

void write_uid(Writer& w, const ExpertUid& uid) {
  w.varint(uid.size());
  for (const std::uint32_t c : uid) w.varint(c);
}

ExpertUid read_uid(Reader& r) {
  const std::size_t n = r.count(1);
  if (n < 1 || n > kMaxGridDims) throw DecodeError("expert uid with " + std::to_string(n) + " coordinates");
  ExpertUid uid(n);
  for (auto& c : uid) {
    const std::uint64_t v = r.varint();
    if (v >= kMaxGridSide) throw DecodeError("expert uid coordinate beyond the largest grid");
    c = static_cast<std::uint32_t>(v);
  }
  return uid;
}

void write_tensor(Writer& w, const Tensor& t, std::uint64_t& virtual_bytes) {
  w.varint(t.rows);
  w.varint(t.cols);
  w.u8(t.is_virtual ? 1 : 0);
  if (t.is_virtual) {
    virtual_bytes += t.bytes();
    return;
  }
  if (t.values.size() != t.elements()) throw std::invalid_argument("expert message: tensor values disagree with its shape");
  w.raw({reinterpret_cast<const std::uint8_t*>(t.values.data()), t.values.size() * sizeof(float)});
}

Tensor read_tensor(Reader& r, std::uint64_t& virtual_bytes) {
  Tensor t;
  const std::uint64_t rows = r.varint(), cols = r.varint();
  if (rows > kMaxMessageBytes || cols > kMaxMessageBytes || rows * cols > kMaxMessageBytes / 4)
    throw DecodeError("tensor of " + std::to_string(rows) + " x " + std::to_string(cols) + " exceeds a message");
  t.rows = static_cast<std::uint32_t>(rows);
  t.cols = static_cast<std::uint32_t>(cols);
  const std::uint8_t flag = r.u8();
  if (flag > 1) throw DecodeError("tensor flag is neither carried nor virtual");
  t.is_virtual = flag == 1;
  if (t.is_virtual) {
    virtual_bytes += t.bytes();
    return t;
  }
  const auto raw = r.raw(t.elements() * sizeof(float));
  t.values.resize(t.elements());
  if (!raw.empty()) std::memcpy(t.values.data(), raw.data(), raw.size());
  return t;
}

}  // namespace

const char* expert_error_name(ExpertError e) {
  switch (e) {
    case ExpertError::UnknownExpert: return "unknown expert";
    case ExpertError::BadShape: return "bad shape";
    case ExpertError::NonFinite: return "non-finite values";
    case ExpertError::Overloaded: return "overloaded";
  }
  return "unknown error";
}

Message encode_expert(const ExpertMessage& m) {
  Message out;
  out.bytes.reserve(32);  // a request's header and uid; also keeps GCC 12 from a false -Warray-bounds
  Writer w(out.bytes);
  w.u8(static_cast<std::uint8_t>(ServiceId::Experts));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.u64(m.request_id);
  switch (m.kind) {
    case ExpertKind::Forward:
      write_uid(w, m.uid);
      write_tensor(w, m.tensor, out.virtual_bytes);
      break;
    case ExpertKind::Backward:
      write_uid(w, m.uid);
      write_tensor(w, m.tensor, out.virtual_bytes);
      write_tensor(w, m.grad_output, out.virtual_bytes);
      break;
    case ExpertKind::Output:
      write_tensor(w, m.tensor, out.virtual_bytes);
      break;
    case ExpertKind::Error:
      w.u8(static_cast<std::uint8_t>(m.error));
      break;
  }
  return out;
}

ExpertMessage decode_expert(const Message& message) {
  Reader r(message.bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Experts)) throw DecodeError("not an expert message");
  ExpertMessage m;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 4) throw DecodeError("unknown expert message kind");
  m.kind = static_cast<ExpertKind>(kind);
  m.request_id = r.u64();
  std::uint64_t virtual_bytes = 0;
  switch (m.kind) {
    case ExpertKind::Forward:
      m.uid = read_uid(r);
      m.tensor = read_tensor(r, virtual_bytes);
      break;
    case ExpertKind::Backward:
      m.uid = read_uid(r);
      m.tensor = read_tensor(r, virtual_bytes);
      m.grad_output = read_tensor(r, virtual_bytes);
      break;
    case ExpertKind::Output:
      m.tensor = read_tensor(r, virtual_bytes);
      break;
    case ExpertKind::Error: {
      const std::uint8_t code = r.u8();
      if (code < 1 || code > 4) throw DecodeError("unknown expert error code");
      m.error = static_cast<ExpertError>(code);
      break;
    }
  }
  r.finish();
  if (virtual_bytes != message.virtual_bytes) throw DecodeError("virtual bytes disagree with the virtual tensors");
  return m;
}

std::optional<ExpertMessage> try_decode_expert(const Message& message) {
  try {
    return decode_expert(message);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace swarmlab::core::dmoe
