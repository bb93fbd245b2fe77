#pragma once
// Maps exceptions escaping a subcommand to a message on stderr and an exit code.
#include <exception>
#include <iostream>

#include "cli/command.h"
#include "core/input_error.h"

namespace swarmlab::cli {

inline int report_error(const std::exception& e) {
  if (dynamic_cast<const core::InputError*>(&e)) {
    std::cerr << "swarmlab: bad input: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (dynamic_cast<const std::invalid_argument*>(&e)) {
    std::cerr << "swarmlab: bad argument: " << e.what() << "\n";
    return kExitBadInput;
  }
  std::cerr << "swarmlab: error: " << e.what() << "\n";
  return kExitFailure;
}

}  // namespace swarmlab::cli
