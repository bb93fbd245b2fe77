#pragma once
// How a collaboration trains (docs/dedloc.md §1, docs/opendiloco.md §1):
// - Dedloc: peers accumulate gradients until the collaboration's samples reach the target batch,
//   then average them (weighted by samples) and take one optimizer step.
// - Diloco: every worker takes H inner optimizer steps on its own, then the workers average their
//   pseudo-gradients and take one outer step.
#include <string_view>

#include "core/names.h"

namespace swarmlab::core::training {

enum class Mode { Dedloc, Diloco };

inline constexpr Named<Mode> kModeNames[] = {{Mode::Dedloc, "dedloc"}, {Mode::Diloco, "diloco"}};
inline std::string_view name(Mode m) { return name_of(kModeNames, m); }

}  // namespace swarmlab::core::training
