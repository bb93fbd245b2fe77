#pragma once
// A bootstrap server as a service (docs/hydra.md §2): it answers BootstrapMessages
// (bootstrap_messages.h) from its BootstrapDirectory. Every request is answered, so a client that
// lost a reply can ask again:
// - AssignId: the sender's 256-bit DHT id, the same one on every ask;
// - RegisterDataset: lists the title with the sender as creator (accepted again when the same
//   creator asks again; refused for another creator, an empty or a full catalogue);
// - ReportLeader: a tracker's leader reports itself (the reported leader must be the sender), for
//   its generation and Raft term; an older generation's or term's report is refused;
// - FindTracker: the dataset's generation and last reported leader;
// - ListDatasets: every title, ascending;
// - FindPeers: up to n peers whose ids are closest to the asker's (assigned) id, to bootstrap its
//   DHT from (none before it was assigned one).
// Malformed messages and replies are counted and dropped.
#include <cstdint>

#include "core/env.h"
#include "core/tracker/bootstrap.h"
#include "core/tracker/bootstrap_messages.h"

namespace swarmlab::core::tracker {

class BootstrapServer final : public Service {
 public:
  BootstrapServer(Environment& env, std::uint64_t seed, std::size_t max_datasets = 100'000)
      : env_(env), directory_(seed, max_datasets) {}

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId) override {}  // stateless per connection

  // The state it serves; a reboot's new generation is set here by whoever rebooted (set_generation).
  BootstrapDirectory& directory() { return directory_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  BootstrapMessage answer(PeerId from, const BootstrapMessage& request);

  Environment& env_;
  BootstrapDirectory directory_;
  std::uint64_t dropped_ = 0;
};

}  // namespace swarmlab::core::tracker
