#include "exec/address_directory.h"

#include "core/wire.h"

namespace swarmlab::exec {

std::vector<std::uint8_t> encode_directory(std::span<const DirectoryEntry> entries) {
  std::vector<std::uint8_t> out;
  out.reserve(8 + entries.size() * 10);
  core::Writer w(out);
  w.u8(kDirectoryFrame);
  w.varint(entries.size());
  for (const DirectoryEntry& e : entries) {
    w.u32(e.peer);
    w.u32(e.address.ip);
    w.u16(e.address.port);
  }
  return out;
}

std::vector<DirectoryEntry> decode_directory(std::span<const std::uint8_t> frame) {
  core::Reader r(frame);
  if (r.u8() != kDirectoryFrame) throw core::DecodeError("not a directory frame");
  const std::uint64_t count = r.varint();
  if (count > kMaxDirectoryEntries) throw core::DecodeError("directory: too many entries");
  std::vector<DirectoryEntry> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    DirectoryEntry e;
    e.peer = r.u32();
    e.address.ip = r.u32();
    e.address.port = r.u16();
    if (e.address.port == 0) throw core::DecodeError("directory: port 0");
    out.push_back(e);
  }
  r.finish();
  return out;
}

}  // namespace swarmlab::exec
