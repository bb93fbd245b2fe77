#pragma once
// A bootstrap server's state (docs/hydra.md §2): it assigns DHT ids to new peers, keeps the catalogue
// of datasets, and knows which peer currently leads each dataset's tracker (and of which group
// generation, after reboots). State only: BootstrapServer serves it (bootstrap_server.h), and a
// tracker's leader reports itself with a LeaderReporter (leader_reporter.h).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/dht/node_id.h"
#include "core/env.h"
#include "core/rng.h"

namespace swarmlab::core::tracker {

struct CatalogueEntry {
  std::string title;
  PeerId creator = 0;
  dht::NodeId key;                   // dataset_key(title)
  std::uint64_t generation = 0;      // of the tracker group now serving it
  std::optional<PeerId> leader;      // last reported leader of that generation
  std::uint64_t leader_term = 0;     // the Raft term it reported
  Seconds leader_reported_at = 0;
};

class BootstrapDirectory {
 public:
  explicit BootstrapDirectory(std::uint64_t seed, std::size_t max_datasets = 100'000)
      : rng_(seed, 0), max_datasets_(max_datasets) {}

  // A fresh random id, distinct from every id assigned so far; the same peer asking again gets
  // the id it was given.
  dht::NodeId assign_id(PeerId peer);
  std::optional<dht::NodeId> id_of(PeerId peer) const;
  // Every peer with an id, for a newcomer's routing table (closest to `target` first, at most n;
  // `except` left out).
  std::vector<PeerId> closest_peers(const dht::NodeId& target, std::size_t n,
                                    std::optional<PeerId> except = std::nullopt) const;

  // Adds a dataset; false when the title is empty, already listed, or the catalogue is full.
  bool register_dataset(std::string title, PeerId creator);
  const CatalogueEntry* find(std::string_view title) const;
  std::vector<std::string> titles() const;

  // A leader reports itself; ignored when older than what is known: a lower generation (a leader
  // of a group that was rebooted cannot overwrite the new one's) or, in the same generation, a
  // lower term (a deposed leader's late report), or another peer claiming the known leader's term
  // (Raft has one leader per term). False when ignored.
  bool report_leader(std::string_view title, std::uint64_t generation, std::uint64_t term, PeerId leader, Seconds now);
  // After a reboot: the new generation, leader unknown until reported.
  bool set_generation(std::string_view title, std::uint64_t generation);

 private:
  Rng rng_;
  std::size_t max_datasets_;
  std::map<PeerId, dht::NodeId> ids_;
  std::set<dht::NodeId> taken_;
  std::map<std::string, CatalogueEntry, std::less<>> catalogue_;
};

}  // namespace swarmlab::core::tracker
