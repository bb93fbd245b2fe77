#pragma once
// The seed-corpus writer of the fuzz targets (each built with -D<T>_FUZZ_MAKE_CORPUS by
// run_fuzz.sh when REGENERATE_CORPUS=1): checks the command line (one corpus directory) and writes
// one named seed file per call.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace swarmlab::fuzz {

class CorpusWriter {
 public:
  CorpusWriter(int argc, char** argv) {
    if (argc == 2) dir_ = argv[1];
    else std::cerr << "usage: " << argv[0] << " <corpus directory>\n";
  }
  bool ok() const { return !dir_.empty(); }
  void write(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(dir_ + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ++written_;
  }
  // Prints the count; main's exit code.
  int done() const {
    std::cout << "wrote " << written_ << " seeds to " << dir_ << "\n";
    return 0;
  }

 private:
  std::string dir_;
  int written_ = 0;
};

// A seed for a target whose first byte picks the decoder: `selector`, then the message's bytes.
inline std::vector<std::uint8_t> with_selector(std::uint8_t selector, std::vector<std::uint8_t> bytes) {
  bytes.insert(bytes.begin(), selector);
  return bytes;
}

}  // namespace swarmlab::fuzz
