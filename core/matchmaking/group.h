#pragma once
// An assembled averaging group, as every member receives it.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/env.h"
#include "core/matchmaking/attachment.h"

namespace swarmlab::core::matchmaking {

struct GroupMember {
  PeerId peer = 0;
  bool client_mode = false;            // sends but cannot be reached: reduces nothing
  Attachment gathered;  // what the member attached to its join (e.g. its capacity)
  friend bool operator==(const GroupMember&, const GroupMember&) = default;
};

struct Group {
  std::uint64_t group_id = 0;        // drawn by the leader; also seeds the members' next bits
  PeerId leader = 0;
  std::vector<GroupMember> members;  // the same order at every member

  std::size_t size() const { return members.size(); }
  std::vector<PeerId> peers() const {
    std::vector<PeerId> out;
    out.reserve(members.size());
    for (const auto& m : members) out.push_back(m.peer);
    return out;
  }
  std::optional<std::size_t> index_of(PeerId peer) const {
    for (std::size_t i = 0; i < members.size(); ++i)
      if (members[i].peer == peer) return i;
    return std::nullopt;
  }
  friend bool operator==(const Group&, const Group&) = default;
};

}  // namespace swarmlab::core::matchmaking
