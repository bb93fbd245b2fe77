#pragma once
// Fashion-MNIST as Debian's dataset-fashion-mnist package ships it: four gzip-compressed IDX files
// under /usr/share/datasets/fashion-mnist/ (train: 60,000 images, test: 10,000; 28 x 28 unsigned
// bytes; labels 0-9).
//
// IDX: a 4-byte magic number (two zero bytes, the element type - 0x08 for unsigned bytes - and the
// number of dimensions), one big-endian uint32 per dimension, then the elements row-major. Every
// decoder here is strict: a wrong magic, a dimension that does not match, a truncated or
// over-long body, a corrupt gzip stream or a label out of range is a core::InputError naming the
// file, the place in it and what was expected (the CLI turns it into exit code 2). No libtorch in
// here: this file is fuzzed (tests/fuzz/idx_fuzz.cc) and is compiled with the default ABI.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace swarmlab::learn {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr std::uint32_t kFashionMnistSide = 28;
inline constexpr std::uint32_t kFashionMnistClasses = 10;
// Pixel statistics of the training set (for inputs of mean 0 and deviation 1).
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStd = 0.3530f;
inline float normalised_pixel(std::uint8_t p) { return (static_cast<float>(p) / 255.0f - kPixelMean) / kPixelStd; }

// One IDX array of unsigned bytes.
struct IdxArray {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;  // product(dims) bytes, row-major
};

// Decodes the bytes of an (uncompressed) IDX file. `source` names it in errors.
IdxArray decode_idx(std::span<const std::uint8_t> bytes, const std::string& source);
// Encodes `array` as IDX (tests and the fuzz corpus write files with it).
std::vector<std::uint8_t> encode_idx(const IdxArray& array);

// Inflates a gzip file's bytes (several members are concatenated); refuses to produce more than
// `max_bytes` (a bomb or a garbled length is an error, not an allocation).
std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> bytes, const std::string& source,
                                 std::size_t max_bytes = std::size_t{1} << 30);
// Compresses `bytes` as one gzip member (tests).
std::vector<std::uint8_t> gzip(std::span<const std::uint8_t> bytes);

// Reads a file whole; one whose name ends in ".gz" is inflated.
std::vector<std::uint8_t> read_file(const std::string& path);
// Writes `bytes` to `path` (".gz": compressed). Throws core::InputError when it cannot.
void write_file(const std::string& path, std::span<const std::uint8_t> bytes);

// Images with their labels, as stored: row-major unsigned bytes.
struct LabelledImages {
  std::uint32_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // count x rows x cols
  std::vector<std::uint8_t> labels;  // count, each < classes
  std::size_t image_size() const { return std::size_t{rows} * cols; }
};

// Loads an image file (3 dimensions) and its label file (1 dimension) and checks that they agree
// (same count) and that every label is below `classes`.
LabelledImages load_labelled_images(const std::string& images_path, const std::string& labels_path,
                                    std::uint32_t classes);

enum class Split { Train, Test };
// One split of Fashion-MNIST from `dir` (Debian's package by default); also checks 28 x 28.
LabelledImages load_fashion_mnist(Split split, const std::string& dir = kFashionMnistDir);
std::string fashion_mnist_images_path(Split split, const std::string& dir = kFashionMnistDir);
std::string fashion_mnist_labels_path(Split split, const std::string& dir = kFashionMnistDir);

}  // namespace swarmlab::learn
