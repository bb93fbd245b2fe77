#include "learn/sample_stream.h"

#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

namespace swarmlab::learn {
namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// A uniform draw below n from a 64-bit word (multiply-high; the bias is below 2^-32 for our sizes).
__extension__ typedef unsigned __int128 u128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet
std::uint64_t below(std::uint64_t word, std::uint64_t n) {
  return static_cast<std::uint64_t>((static_cast<u128>(word) * n) >> 64);
}

// A keyed bijection of [0, n): a balanced Feistel network over the smallest even number of bits
// that covers n, walking the cycle until the value falls inside [0, n) (fewer than 4 steps on
// average). Random access into a random permutation without storing it.
std::uint64_t permute(std::uint64_t key, std::uint64_t n, std::uint64_t i) {
  unsigned bits = std::bit_width(n - 1);
  if (bits < 2) bits = 2;
  bits += bits & 1;
  const unsigned half = bits / 2;
  const std::uint64_t mask = (std::uint64_t{1} << half) - 1;
  std::uint64_t x = i;
  do {
    std::uint64_t left = x >> half, right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t f = mix64(key ^ (round * kGolden) ^ (right << 8)) & mask;
      std::swap(left, right);
      right ^= f;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  x += kGolden;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------------------------
// ShardStream

ShardStream::ShardStream(ShardStreamConfig config) : config_(config) {
  if (config_.dataset_size == 0) throw std::invalid_argument("shard stream: empty dataset");
  if (config_.shard_size == 0) throw std::invalid_argument("shard stream: shard size 0");
  if (config_.buffer_size == 0) throw std::invalid_argument("shard stream: buffer size 0");
  rng_state_ = mix64(mix64(config_.seed) ^ config_.peer) ^ 0x5348554646ull;  // "SHUFF"
  const std::uint32_t shards = (config_.dataset_size + config_.shard_size - 1) / config_.shard_size;
  shard_order_.resize(shards);
  start_pass();
}

std::uint64_t ShardStream::random() {
  rng_state_ += kGolden;
  return mix64(rng_state_);
}

void ShardStream::start_pass() {
  // The order of a pass depends on (seed, peer, pass) only, not on how far the buffer has drawn.
  for (std::uint32_t s = 0; s < shard_order_.size(); ++s) shard_order_[s] = s;
  std::uint64_t state = mix64(mix64(config_.seed ^ 0x5348415244ull) ^ config_.peer) ^ mix64(pass_);  // "SHARD"
  for (std::size_t i = shard_order_.size(); i > 1; --i) {
    state += kGolden;
    std::swap(shard_order_[i - 1], shard_order_[below(mix64(state), i)]);
  }
  shard_cursor_ = 0;
  in_shard_ = 0;
  ++pass_;
}

std::uint32_t ShardStream::pull() {
  const std::uint32_t shard = shard_order_[shard_cursor_];
  const std::uint32_t index = shard * config_.shard_size + in_shard_;
  ++in_shard_;
  if (in_shard_ == config_.shard_size || index + 1 == config_.dataset_size) {
    in_shard_ = 0;
    if (++shard_cursor_ == shard_order_.size()) start_pass();
  }
  return index;
}

void ShardStream::next(std::uint64_t n, std::vector<std::uint32_t>& out) {
  if (buffer_.empty()) {
    buffer_.resize(config_.buffer_size);
    for (auto& slot : buffer_) slot = pull();
  }
  out.reserve(out.size() + n);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t& slot = buffer_[below(random(), buffer_.size())];
    out.push_back(slot);
    slot = pull();
  }
  position_ += n;
}

// ---------------------------------------------------------------------------------------------
// FixedOrderStream

std::uint32_t fixed_order_index(std::uint64_t seed, std::uint32_t size, std::uint64_t peer, std::uint64_t k) {
  const std::uint64_t pass = k / size;
  const std::uint64_t offset = (k % size + (peer % size) * 7919) % size;
  return static_cast<std::uint32_t>(permute(mix64(seed ^ mix64(pass)), size, offset));
}

FixedOrderStream::FixedOrderStream(std::uint64_t seed, std::uint32_t dataset_size, std::uint64_t peer, std::uint64_t start)
    : seed_(seed), size_(dataset_size), peer_(peer), position_(start) {
  if (size_ == 0) throw std::invalid_argument("fixed-order stream: empty dataset");
}

void FixedOrderStream::next(std::uint64_t n, std::vector<std::uint32_t>& out) {
  out.reserve(out.size() + n);
  for (std::uint64_t i = 0; i < n; ++i) out.push_back(fixed_order_index(seed_, size_, peer_, position_ + i));
  position_ += n;
}

// ---------------------------------------------------------------------------------------------
// ListStream

void ListStream::next(std::uint64_t n, std::vector<std::uint32_t>& out) {
  if (n > indices_.size() - position_)
    throw std::out_of_range("list stream: " + std::to_string(n) + " samples asked, " +
                            std::to_string(indices_.size() - position_) + " left");
  out.insert(out.end(), indices_.begin() + static_cast<std::ptrdiff_t>(position_),
             indices_.begin() + static_cast<std::ptrdiff_t>(position_ + n));
  position_ += n;
}

}  // namespace swarmlab::learn
