#include "core/training/state_cohort.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/matchmaking/announcement_codec.h"
#include "core/wire.h"

namespace swarmlab::core::training {

namespace {

std::optional<std::uint64_t> announced_state_step(const matchmaking::GroupMember& m) {
  try {
    return matchmaking::decode_announcement(m.gathered.bytes()).state_step;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<matchmaking::Group> newest_state_cohort(const matchmaking::Group& group) {
  // Every member of every group asks, and usually nobody is behind: that answer copies nothing.
  std::vector<std::optional<std::uint64_t>> steps;
  steps.reserve(group.members.size());
  std::optional<std::uint64_t> newest, oldest;
  for (const matchmaking::GroupMember& m : group.members) {
    const std::optional<std::uint64_t> s = steps.emplace_back(announced_state_step(m));
    if (!s) continue;
    newest = std::max(newest.value_or(*s), *s);
    oldest = std::min(oldest.value_or(*s), *s);
  }
  if (newest == oldest) return std::nullopt;
  matchmaking::Group cohort{group.group_id, group.leader, {}};
  for (std::size_t i = 0; i < group.members.size(); ++i)
    if (!steps[i] || *steps[i] == *newest) cohort.members.push_back(group.members[i]);
  return cohort;
}

}  // namespace swarmlab::core::training
