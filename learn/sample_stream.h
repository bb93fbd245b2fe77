#pragma once
// Which training samples a peer reads, in which order (docs/dedloc.md §5, "Data streaming").
//
// A stream yields dataset indices. Every stream is a pure function of its parameters: position k
// of peer p's stream is the same index in every run, so whatever a collaboration trained on can be
// replayed in one process. A learner records, for each micro-batch, the peer's stream positions it
// covered; positions are what steps are made of (see TorchLearner::handover()).
//
// - ShardStream: DeDLOC's pipeline. The training set is cut into shards of consecutive indices;
//   each peer visits the shards in its own seeded random order (a new order every pass) and streams
//   their samples into a shuffle buffer of S samples; each sample drawn is a uniformly random entry
//   of the buffer, whose place is refilled from the stream.
// - FixedOrderStream: a sample order shared by everyone, with random access: position k of peer p is
//   fixed_order_index(seed, size, p, k), the k-th entry of peer p's stripe of a seeded permutation
//   of the whole set (a new permutation every pass). No buffer, no state: the equivalence test
//   (issue 12) replays a step from its (peer, positions) record alone.
// - ListStream: plays a given list of indices (a replay; the single-process reference run).
//
// No libtorch here: these classes cross into the learner's translation unit, so they hold only
// standard containers of integers.
#include <cstdint>
#include <vector>

namespace swarmlab::learn {

class SampleStream {
 public:
  virtual ~SampleStream() = default;
  // Appends the next `n` indices to `out` and advances by n.
  virtual void next(std::uint64_t n, std::vector<std::uint32_t>& out) = 0;
  // Samples yielded so far.
  virtual std::uint64_t position() const = 0;
};

// The splitmix64 finaliser: the one mixing function of the learn part (seeded orders, weights).
std::uint64_t mix64(std::uint64_t x);

struct ShardStreamConfig {
  std::uint32_t dataset_size = 0;
  std::uint32_t shard_size = 1000;   // samples per shard (the last one may be shorter)
  std::uint32_t buffer_size = 10000;  // S (docs/dedloc.md §5)
  std::uint64_t seed = 0;             // the collaboration's data seed
  std::uint64_t peer = 0;             // this peer's identity; different peers read different orders
};

class ShardStream final : public SampleStream {
 public:
  // Throws std::invalid_argument on an empty dataset or a zero shard or buffer size.
  explicit ShardStream(ShardStreamConfig config);
  void next(std::uint64_t n, std::vector<std::uint32_t>& out) override;
  std::uint64_t position() const override { return position_; }

  std::uint64_t passes_started() const { return pass_; }

 private:
  std::uint32_t pull();  // the next index of the shard stream (before the buffer)
  void start_pass();
  std::uint64_t random();  // the buffer's draws

  ShardStreamConfig config_;
  std::vector<std::uint32_t> shard_order_;
  std::size_t shard_cursor_ = 0;  // index into shard_order_
  std::uint32_t in_shard_ = 0;    // next offset inside the current shard
  std::uint64_t pass_ = 0;
  std::vector<std::uint32_t> buffer_;
  std::uint64_t rng_state_;
  std::uint64_t position_ = 0;
};

// Position `k` of peer `peer`'s stripe in the shared fixed order over a set of `size` samples.
// Pass q = k / size uses permutation q; peer p reads it starting at offset p * 7919 (mod size), so
// peers start on different samples yet a pass visits every sample once.
std::uint32_t fixed_order_index(std::uint64_t seed, std::uint32_t size, std::uint64_t peer, std::uint64_t k);

class FixedOrderStream final : public SampleStream {
 public:
  // Throws std::invalid_argument on an empty dataset.
  FixedOrderStream(std::uint64_t seed, std::uint32_t dataset_size, std::uint64_t peer, std::uint64_t start = 0);
  void next(std::uint64_t n, std::vector<std::uint32_t>& out) override;
  std::uint64_t position() const override { return position_; }

 private:
  std::uint64_t seed_;
  std::uint32_t size_;
  std::uint64_t peer_;
  std::uint64_t position_;
};

class ListStream final : public SampleStream {
 public:
  explicit ListStream(std::vector<std::uint32_t> indices) : indices_(std::move(indices)) {}
  // Throws std::out_of_range past the end of the list.
  void next(std::uint64_t n, std::vector<std::uint32_t>& out) override;
  std::uint64_t position() const override { return position_; }
  // Appends more indices to play.
  void append(const std::vector<std::uint32_t>& more) { indices_.insert(indices_.end(), more.begin(), more.end()); }

 private:
  std::vector<std::uint32_t> indices_;
  std::uint64_t position_ = 0;
};

}  // namespace swarmlab::learn
