#include "learn/fashion_mnist.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/input_error.h"

namespace swarmlab::learn {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A scratch folder removed at the end of each test.
class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("swarmlab_idx_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Three 2 x 3 images and their labels.
  static IdxArray images() {
    IdxArray a{{3, 2, 3}, {}};
    for (int i = 0; i < 18; ++i) a.data.push_back(static_cast<std::uint8_t>(i * 14));
    return a;
  }
  static IdxArray labels() { return IdxArray{{3}, {7, 0, 9}}; }

  // The message of the InputError that loading (images, labels) throws.
  std::string load_error(const std::string& images_path, const std::string& labels_path) {
    try {
      load_labelled_images(images_path, labels_path, 10);
    } catch (const core::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no InputError";
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(IdxFiles, RoundTripRawAndGzip) {
  for (const std::string ext : {"", ".gz"}) {
    write_file(path("img" + ext), encode_idx(images()));
    write_file(path("lab" + ext), encode_idx(labels()));
    const LabelledImages set = load_labelled_images(path("img" + ext), path("lab" + ext), 10);
    EXPECT_EQ(set.count, 3u);
    EXPECT_EQ(set.rows, 2u);
    EXPECT_EQ(set.cols, 3u);
    EXPECT_EQ(set.pixels, images().data);
    EXPECT_EQ(set.labels, labels().data);
  }
  // The compressed file really is gzip, and inflates to the raw one.
  const std::vector<std::uint8_t> raw = read_file(path("img"));
  EXPECT_EQ(raw, encode_idx(images()));
  EXPECT_EQ(read_file(path("img.gz")), raw);
}

TEST_F(IdxFiles, ConcatenatedGzipMembersAreOneFile) {
  const std::vector<std::uint8_t> bytes = encode_idx(images());
  const std::size_t half = bytes.size() / 2;
  std::vector<std::uint8_t> packed = gzip(std::span(bytes).first(half));
  const std::vector<std::uint8_t> second = gzip(std::span(bytes).subspan(half));
  packed.insert(packed.end(), second.begin(), second.end());
  EXPECT_EQ(gunzip(packed, "two-members.gz"), bytes);
}

TEST(FashionMnist, RealDatasetHeadersAndFirstLabels) {
  const LabelledImages test = load_fashion_mnist(Split::Test);
  EXPECT_EQ(test.count, 10000u);
  EXPECT_EQ(test.rows, 28u);
  EXPECT_EQ(test.cols, 28u);
  EXPECT_EQ(test.pixels.size(), 10000u * 784u);
  EXPECT_EQ(std::vector<std::uint8_t>(test.labels.begin(), test.labels.begin() + 10),
            (std::vector<std::uint8_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  const LabelledImages train = load_fashion_mnist(Split::Train);
  EXPECT_EQ(train.count, 60000u);
  EXPECT_EQ(std::vector<std::uint8_t>(train.labels.begin(), train.labels.begin() + 10),
            (std::vector<std::uint8_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  // The first training image (an ankle boot): its pixel sum, as the raw file has it.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < 784; ++i) sum += train.pixels[i];
  EXPECT_EQ(sum, 76247u);
  // Ten classes, each 6,000 times in the training set.
  std::vector<int> per_class(10);
  for (auto l : train.labels) ++per_class[l];
  for (int c : per_class) EXPECT_EQ(c, 6000);
}

TEST_F(IdxFiles, WrongMagicNamesFileAndExpectation) {
  std::vector<std::uint8_t> bytes = encode_idx(images());
  bytes[2] = 0x0D;  // float elements
  write_file(path("img"), bytes);
  write_file(path("lab"), encode_idx(labels()));
  EXPECT_THAT(load_error(path("img"), path("lab")),
              AllOf(HasSubstr(path("img")), HasSubstr("magic number"), HasSubstr("expected 0x000008NN"),
                    HasSubstr("found 0x00000D03")));
}

TEST_F(IdxFiles, TruncatedBodyNamesLengths) {
  std::vector<std::uint8_t> bytes = encode_idx(images());
  bytes.resize(bytes.size() - 5);
  write_file(path("img.gz"), bytes);
  write_file(path("lab"), encode_idx(labels()));
  EXPECT_THAT(load_error(path("img.gz"), path("lab")),
              AllOf(HasSubstr(path("img.gz")), HasSubstr("data"), HasSubstr("expected 18 bytes for 3 x 2 x 3"),
                    HasSubstr("found 13"), HasSubstr("truncated")));
}

TEST_F(IdxFiles, TrailingBytesAndShortHeaders) {
  std::vector<std::uint8_t> bytes = encode_idx(labels());
  bytes.push_back(1);
  EXPECT_THROW(
      {
        try {
          decode_idx(bytes, "lab");
        } catch (const core::InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("trailing bytes"));
          throw;
        }
      },
      core::InputError);
  const std::vector<std::uint8_t> header_only = {0, 0, 8, 3, 0, 0, 0, 1};
  try {
    decode_idx(header_only, "short");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("short: header"), HasSubstr("expected 3 dimension sizes")));
  }
  EXPECT_THROW(decode_idx(std::vector<std::uint8_t>{0, 0}, "tiny"), core::InputError);
}

TEST_F(IdxFiles, HugeDimensionsAreAnErrorNotAnAllocation) {
  // 2^32 - 1 squared fits in 64 bits: a truncated body, reported without allocating it.
  const std::vector<std::uint8_t> big = {0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1};
  try {
    decode_idx(big, "big");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("big: data"), HasSubstr("expected 18446744065119617025 bytes"),
                                HasSubstr("found 1 (truncated)")));
  }
  // Cubed it does not: the product is refused before it wraps around.
  const std::vector<std::uint8_t> huge = {0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1};
  try {
    decode_idx(huge, "huge");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("huge: dimension 2"), HasSubstr("beyond 2^64 elements")));
  }
}

TEST_F(IdxFiles, TruncatedAndCorruptGzip) {
  std::vector<std::uint8_t> packed = gzip(encode_idx(images()));
  std::vector<std::uint8_t> cut(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(packed.size() / 2));
  try {
    gunzip(cut, "cut.gz");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("cut.gz"), HasSubstr("truncated gzip stream")));
  }
  std::vector<std::uint8_t> bad = packed;
  bad[12] ^= 0xff;  // inside the deflate stream
  bad[13] ^= 0x5a;
  EXPECT_THROW(gunzip(bad, "bad.gz"), core::InputError);
  try {
    gunzip(std::vector<std::uint8_t>{1, 2, 3}, "plain.gz");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("plain.gz: gzip header"), HasSubstr("1f 8b")));
  }
  // A stream that inflates beyond the limit stops there.
  const std::vector<std::uint8_t> zeros(1 << 20, 0);
  EXPECT_THROW(gunzip(gzip(zeros), "bomb.gz", 1000), core::InputError);
}

TEST_F(IdxFiles, LabelsMustMatchImagesAndClasses) {
  write_file(path("img"), encode_idx(images()));
  write_file(path("two"), encode_idx(IdxArray{{2}, {1, 2}}));
  EXPECT_THAT(load_error(path("img"), path("two")),
              AllOf(HasSubstr(path("two")), HasSubstr("dimension 0"), HasSubstr("expected 3 labels"), HasSubstr("found 2")));
  write_file(path("big"), encode_idx(IdxArray{{3}, {1, 10, 2}}));
  EXPECT_THAT(load_error(path("img"), path("big")),
              AllOf(HasSubstr("label 1"), HasSubstr("expected a class below 10"), HasSubstr("found 10")));
  write_file(path("flat"), encode_idx(IdxArray{{18}, images().data}));
  EXPECT_THAT(load_error(path("flat"), path("two")), AllOf(HasSubstr(path("flat")), HasSubstr("expected 3 dimensions")));
  EXPECT_THAT(load_error(path("missing"), path("two")), AllOf(HasSubstr(path("missing")), HasSubstr("cannot open")));
}

TEST_F(IdxFiles, FashionMnistChecksImageSize) {
  // A folder laid out like the package's, with 2 x 3 images.
  write_file(path("t10k-images-idx3-ubyte.gz"), encode_idx(images()));
  write_file(path("t10k-labels-idx1-ubyte.gz"), encode_idx(labels()));
  try {
    load_fashion_mnist(Split::Test, dir_.string());
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("t10k-images-idx3-ubyte.gz"), HasSubstr("expected 28 x 28 pixels, found 2 x 3")));
  }
}

}  // namespace
}  // namespace swarmlab::learn
