// libFuzzer target for the dataset decoders (tests/fuzz/run_fuzz.sh idx builds and runs it): an
// IDX file's bytes and a gzip stream. Every input must either decode or throw core::InputError;
// a decoded IDX array must encode back to the same bytes. Sanitizers catch the rest (overreads,
// overflowing sizes, allocations driven by a forged header).
//
// Built with -DIDX_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "learn/fashion_mnist.h"

namespace {

using namespace swarmlab;

void check_idx(std::span<const std::uint8_t> in) {
  learn::IdxArray a;
  try {
    a = learn::decode_idx(in, "fuzz");
  } catch (const core::InputError&) {
    return;
  }
  const std::vector<std::uint8_t> again = learn::encode_idx(a);
  if (again.size() != in.size() || !std::equal(again.begin(), again.end(), in.begin())) std::abort();
}

}  // namespace

#ifndef IDX_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  check_idx(in);
  try {
    const std::vector<std::uint8_t> inflated = learn::gunzip(in, "fuzz.gz", 1 << 20);
    check_idx(inflated);
  } catch (const core::InputError&) {
  }
  return 0;
}

#else

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  auto save = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    learn::write_file(dir + "/" + name, bytes);
  };
  learn::IdxArray labels{{6}, {9, 0, 0, 3, 0, 2}};
  learn::IdxArray images{{2, 4, 4}, {}};
  for (int i = 0; i < 32; ++i) images.data.push_back(static_cast<std::uint8_t>(i * 8));
  save("labels", learn::encode_idx(labels));
  save("images", learn::encode_idx(images));
  save("labels_gz", learn::gzip(learn::encode_idx(labels)));
  save("images_gz", learn::gzip(learn::encode_idx(images)));
  std::vector<std::uint8_t> truncated = learn::encode_idx(images);
  truncated.resize(truncated.size() - 7);
  save("truncated", truncated);
  std::vector<std::uint8_t> cut_gz = learn::gzip(learn::encode_idx(images));
  cut_gz.resize(cut_gz.size() / 2);
  save("truncated_gz", cut_gz);
  save("bad_magic", {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  save("huge_dims", {0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  return 0;
}

#endif
