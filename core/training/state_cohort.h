#pragma once
// Who of an assembled group averages together (docs/interpretations.md §26). A member that holds
// the collaboration's state at an older step than another member's missed a round: its gradient
// was computed on parameters the others no longer hold, and whatever step the round was called,
// the two sides would come out of it with different states, and the smaller one would load the
// other's whole state. So every member leaves such members out, deciding from the announcements
// every member received (matchmaking::Announcement), so that all compute the same cohort. A member
// that announces no state (a pure reducer, or one that does not load states) always stays.
#include <optional>

#include "core/matchmaking/group.h"

namespace swarmlab::core::training {

// `group` without the members whose announced state step is below the newest one announced;
// nullopt when nobody is behind (the group averages whole). Members whose announcement does not
// decode stay (they are taken to neither send nor reduce).
std::optional<matchmaking::Group> newest_state_cohort(const matchmaking::Group& group);

}  // namespace swarmlab::core::training
