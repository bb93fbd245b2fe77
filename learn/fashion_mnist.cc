#include "learn/fashion_mnist.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "core/input_error.h"

namespace swarmlab::learn {
namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::size_t kMaxDims = 8;

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

void write_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

std::string dims_text(const std::vector<std::uint32_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

IdxArray decode_idx(std::span<const std::uint8_t> bytes, const std::string& source) {
  if (bytes.size() < 4)
    throw core::InputError(source, "header", "expected a 4-byte IDX magic number, found " + std::to_string(bytes.size()) +
                                                 " bytes");
  const std::uint32_t magic = read_be32(bytes.data());
  const std::uint8_t type = bytes[2];
  const std::uint8_t ndims = bytes[3];
  if (bytes[0] != 0 || bytes[1] != 0 || type != kUnsignedByte || ndims == 0 || ndims > kMaxDims)
    throw core::InputError(source, "magic number",
                           "expected 0x000008NN (IDX, unsigned bytes, NN = 1.." + std::to_string(kMaxDims) +
                               " dimensions), found " + hex(magic));
  const std::size_t header = 4 + 4 * std::size_t{ndims};
  if (bytes.size() < header)
    throw core::InputError(source, "header",
                           "expected " + std::to_string(ndims) + " dimension sizes (" + std::to_string(header) +
                               " header bytes), the file has " + std::to_string(bytes.size()) + " bytes");
  IdxArray out;
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < ndims; ++d) {
    const std::uint32_t n = read_be32(bytes.data() + 4 + 4 * d);
    out.dims.push_back(n);
    // A forged header must not wrap the product around to a small number that matches the body.
    if (n != 0 && elements > std::numeric_limits<std::uint64_t>::max() / n)
      throw core::InputError(source, "dimension " + std::to_string(d),
                             "the dimensions multiply beyond 2^64 elements");
    elements *= n;
  }
  const std::uint64_t body = bytes.size() - header;
  if (body != elements)
    throw core::InputError(source, "data",
                           "expected " + std::to_string(elements) + " bytes for " + dims_text(out.dims) +
                               " elements after the " + std::to_string(header) + "-byte header, found " +
                               std::to_string(body) + (body < elements ? " (truncated)" : " (trailing bytes)"));
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

std::vector<std::uint8_t> encode_idx(const IdxArray& array) {
  std::vector<std::uint8_t> out = {0, 0, kUnsignedByte, static_cast<std::uint8_t>(array.dims.size())};
  for (std::uint32_t d : array.dims) write_be32(out, d);
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> bytes, const std::string& source, std::size_t max_bytes) {
  if (bytes.size() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b)
    throw core::InputError(source, "gzip header", "expected the gzip magic bytes 1f 8b");
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw core::InputError(source, "gzip", "zlib could not start");
  std::unique_ptr<z_stream, void (*)(z_stream*)> guard(&z, [](z_stream* s) { inflateEnd(s); });
  std::vector<std::uint8_t> out;
  std::size_t consumed = 0;
  std::uint8_t chunk[1 << 16];
  while (true) {
    z.next_in = const_cast<Bytef*>(bytes.data() + consumed);
    const std::size_t avail = std::min<std::size_t>(bytes.size() - consumed, std::numeric_limits<uInt>::max());
    z.avail_in = static_cast<uInt>(avail);
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    const int rc = inflate(&z, Z_NO_FLUSH);
    consumed += avail - z.avail_in;
    const std::size_t produced = sizeof chunk - z.avail_out;
    if (out.size() + produced > max_bytes)
      throw core::InputError(source, "gzip", "inflates to more than " + std::to_string(max_bytes) + " bytes");
    out.insert(out.end(), chunk, chunk + produced);
    if (rc == Z_STREAM_END) {
      if (consumed == bytes.size()) return out;
      // Another member follows (gzip allows concatenation).
      if (bytes.size() - consumed < 2 || bytes[consumed] != 0x1f || bytes[consumed + 1] != 0x8b)
        throw core::InputError(source, "byte " + std::to_string(consumed),
                               "expected the end of the file or another gzip member after the compressed stream");
      inflateReset(&z);
      continue;
    }
    if (rc == Z_BUF_ERROR || (rc == Z_OK && consumed == bytes.size() && produced == 0))
      throw core::InputError(source, "byte " + std::to_string(consumed),
                             "truncated gzip stream (expected more compressed data)");
    if (rc != Z_OK)
      throw core::InputError(source, "byte " + std::to_string(consumed),
                             std::string("corrupt gzip stream: ") + (z.msg ? z.msg : "zlib error " + std::to_string(rc)));
  }
}

std::vector<std::uint8_t> gzip(std::span<const std::uint8_t> bytes) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: zlib could not start");
  std::vector<std::uint8_t> out(deflateBound(&z, bytes.size()) + 32);
  z.next_in = const_cast<Bytef*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate failed");
  return out;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw core::InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.insert(bytes.end(), buf, buf + n);
  if (std::ferror(f.get())) throw core::InputError(path, "", "read error");
  if (ends_with(path, ".gz")) return gunzip(bytes, path);
  return bytes;
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> packed;
  if (ends_with(path, ".gz")) {
    packed = gzip(bytes);
    bytes = packed;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    throw core::InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
}

LabelledImages load_labelled_images(const std::string& images_path, const std::string& labels_path,
                                    std::uint32_t classes) {
  IdxArray images = decode_idx(read_file(images_path), images_path);
  IdxArray labels = decode_idx(read_file(labels_path), labels_path);
  if (images.dims.size() != 3)
    throw core::InputError(images_path, "header",
                           "expected 3 dimensions (images x rows x columns), found " + std::to_string(images.dims.size()));
  if (labels.dims.size() != 1)
    throw core::InputError(labels_path, "header",
                           "expected 1 dimension (labels), found " + std::to_string(labels.dims.size()));
  if (labels.dims[0] != images.dims[0])
    throw core::InputError(labels_path, "dimension 0",
                           "expected " + std::to_string(images.dims[0]) + " labels, one per image of " + images_path +
                               ", found " + std::to_string(labels.dims[0]));
  for (std::size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= classes)
      throw core::InputError(labels_path, "label " + std::to_string(i),
                             "expected a class below " + std::to_string(classes) + ", found " +
                                 std::to_string(labels.data[i]));
  LabelledImages out;
  out.count = images.dims[0];
  out.rows = images.dims[1];
  out.cols = images.dims[2];
  out.pixels = std::move(images.data);
  out.labels = std::move(labels.data);
  return out;
}

std::string fashion_mnist_images_path(Split split, const std::string& dir) {
  return dir + (split == Split::Train ? "/train-images-idx3-ubyte.gz" : "/t10k-images-idx3-ubyte.gz");
}
std::string fashion_mnist_labels_path(Split split, const std::string& dir) {
  return dir + (split == Split::Train ? "/train-labels-idx1-ubyte.gz" : "/t10k-labels-idx1-ubyte.gz");
}

LabelledImages load_fashion_mnist(Split split, const std::string& dir) {
  const std::string images_path = fashion_mnist_images_path(split, dir);
  LabelledImages out = load_labelled_images(images_path, fashion_mnist_labels_path(split, dir), kFashionMnistClasses);
  if (out.rows != kFashionMnistSide || out.cols != kFashionMnistSide)
    throw core::InputError(images_path, "dimensions 1-2",
                           "expected 28 x 28 pixels, found " + std::to_string(out.rows) + " x " + std::to_string(out.cols));
  if (out.count == 0) throw core::InputError(images_path, "dimension 0", "expected at least one image, found 0");
  return out;
}

}  // namespace swarmlab::learn
