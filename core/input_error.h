#pragma once
// The one error type for bad user input (scenarios, traces, command-line values). Its message
// always names the source (file), the place in it (JSON path or line) and what was expected, and
// the CLI turns it into exit code 2.
#include <stdexcept>
#include <string>

namespace swarmlab::core {

class InputError : public std::runtime_error {
 public:
  InputError(std::string source, std::string location, std::string problem)
      : std::runtime_error(source + (location.empty() ? "" : ": " + location) + ": " + problem),
        source_(std::move(source)), location_(std::move(location)) {}
  const std::string& source() const { return source_; }
  const std::string& location() const { return location_; }

 private:
  std::string source_;
  std::string location_;
};

}  // namespace swarmlab::core
