#pragma once
// Tracker groups under test: peers 0 .. replicas-1+spares are tracker hosts (each a TrackerHost),
// then a client peer and the dataset creator's peer, in the core's memory world with its faults on
// (loss, duplication, reordering). Every peer has a random DHT id; the group's replicas are the
// peers closest to SHA-256 of the title. Lost replicas vanish silently and for good (their storage
// with them). As the run goes it checks, per group generation, that no two replicas apply
// different entries at one index and that no term has two leaders.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/dht/node_id.h"
#include "core/tracker/client.h"
#include "core/tracker/group.h"
#include "core/tracker/reboot.h"
#include "core/tracker/replica.h"
#include "support/memory_world.h"

namespace swarmlab::core::tracker::testing {

using core::testing::LinkFaults;
using core::testing::MemoryWorld;

struct TrackerWorldOptions {
  std::size_t hosts = 10;  // peers that may replicate the tracker
  std::size_t replicas = 3;
  std::string title = "fashion-mnist";
  LinkFaults faults{0.05, 0.02, 0.001, 0.005, false};
  std::uint64_t seed = 1;
};

class TrackerWorld {
 public:
  explicit TrackerWorld(TrackerWorldOptions options)
      : options_(std::move(options)), net_(options_.hosts + 2, core::testing::PeerSpec{0, 0, 0}, options_.seed) {
    net_.set_faults(options_.faults);
    Rng rng(options_.seed, 999);
    for (PeerId p = 0; p < net_.size(); ++p) {
      ids_.push_back(dht::NodeId::random(rng, dht::kHydraIdBits));
      hosts_.push_back(std::make_unique<TrackerHost>(net_.env(p)));
      net_.env(p).set_sink(hosts_.back().get());
    }
    group_options_.replicas = options_.replicas;
    group_options_.replace_after = 1.0;
    // Every peer answers reboot requests; the creator's rebooter hears the replies.
    for (PeerId p = 0; p < net_.size(); ++p)
      hosts_[p]->serve_reboots(group_options_, [this, p](std::uint64_t generation) { return hooks(p, generation); });
    rebooter_ = std::make_unique<TrackerRebooter>(net_.env(creator_peer()));
    hosts_[creator_peer()]->attach_rebooter(*rebooter_);
    found(live_hosts());
    client_ = make_client(client_peer(), 1);
    creator_ = make_client(creator_peer(), 2);
  }
  ~TrackerWorld() {
    hosts_[creator_peer()]->detach_rebooter();
    rebooter_.reset();
    backup_.reset();
    for (PeerId p : {client_peer(), creator_peer()}) hosts_[p]->detach_client(group_);
    client_.reset();
    creator_.reset();
    for (auto& h : hosts_)
      for (std::uint64_t g : h->groups()) h->drop(g);
  }

  MemoryWorld& net() { return net_; }
  Seconds now() const { return net_.now(); }
  PeerId client_peer() const { return static_cast<PeerId>(options_.hosts); }
  PeerId creator_peer() const { return static_cast<PeerId>(options_.hosts + 1); }
  TrackerClient& client() { return *client_; }
  TrackerClient& creator() { return *creator_; }
  std::uint64_t group() const { return group_; }
  std::uint64_t generation() const { return generation_; }
  const std::vector<PeerId>& candidates() const { return candidates_; }
  const std::string& violations() const { return violations_; }
  std::set<PeerId> lost() const { return lost_; }

  TrackerReplica* replica(PeerId p) { return p < options_.hosts ? hosts_[p]->replica(group_) : nullptr; }
  // The leader of the highest term among running replicas of the current group.
  std::optional<PeerId> leader() {
    std::optional<PeerId> best;
    for (PeerId p = 0; p < options_.hosts; ++p) {
      TrackerReplica* r = replica(p);
      if (r && r->running() && r->node()->is_leader() && (!best || r->node()->term() > replica(*best)->node()->term()))
        best = p;
    }
    return best;
  }
  std::optional<PeerId> run_until_leader(Seconds deadline) {
    while (now() < deadline && !leader()) net_.run_for(0.01);
    return leader();
  }

  // A permanent loss: the replica crashes with its storage and the peer vanishes silently.
  void lose(PeerId p) {
    hosts_[p]->drop(group_);
    net_.set_down(p, MemoryWorld::Departure::Silent);
    lost_.insert(p);
  }
  std::vector<raft::CandidatePeer> live_hosts() const {
    std::vector<raft::CandidatePeer> out;
    for (PeerId p = 0; p < options_.hosts; ++p)
      if (!lost_.count(p)) out.push_back({p, ids_[p]});
    return out;
  }

  // The creator's periodic snapshots.
  TrackerBackup& start_backup(Seconds interval) {
    backup_ = std::make_unique<TrackerBackup>(net_.env(creator_peer()), *creator_, options_.title, generation_, interval);
    backup_->start();
    return *backup_;
  }
  TrackerBackup* backup() { return backup_.get(); }

  // Reboots the tracker from `snapshot` on the live hosts closest to the key, through the creator's
  // TrackerRebooter and the hosts' answers over the faulty network; clients follow. Returns the
  // outcome (not ok if the reboot failed, and then nothing else changes).
  RebootOutcome reboot(const TrackerSnapshot& snapshot) {
    std::optional<RebootOutcome> outcome;
    rebooter_->reboot(snapshot, live_hosts(), group_options_, [&](const RebootOutcome& o) { outcome = o; });
    while (!outcome) net_.run_for(0.01);  // the rebooter reports by its timeout at the latest
    if (!outcome->ok) return *outcome;
    for (PeerId p : {client_peer(), creator_peer()}) hosts_[p]->detach_client(group_);
    generation_ = snapshot.generation + 1;
    group_ = outcome->plan.raft.group;
    candidates_ = outcome->plan.candidates;
    hosts_[client_peer()]->attach_client(group_, *client_);
    hosts_[creator_peer()]->attach_client(group_, *creator_);
    client_->retarget(group_, candidates_);
    creator_->retarget(group_, candidates_);
    if (backup_) backup_->set_generation(generation_);
    return *outcome;
  }
  const TrackerRebooter& rebooter() const { return *rebooter_; }
  TrackerHost& host(PeerId p) { return *hosts_[p]; }

  // True once the leader's configuration has `replicas` members, all running, every one having
  // applied everything the leader committed, with the same metadata.
  bool settled() {
    auto l = leader();
    if (!l) return false;
    raft::RaftNode& lead = *replica(*l)->node();
    if (lead.config().size() != options_.replicas || lead.learner()) return false;
    for (PeerId m : lead.config().members) {
      TrackerReplica* r = replica(m);
      if (!r || !r->running() || lost_.count(m)) return false;
      if (r->node()->applied_index() != lead.commit_index()) return false;
      if (!(r->machine()->info() == replica(*l)->machine()->info())) return false;
    }
    return true;
  }
  bool run_until_settled(Seconds deadline) {
    while (now() < deadline) {
      if (settled()) return true;
      net_.run_for(0.05);
    }
    return settled();
  }

 private:
  std::unique_ptr<TrackerClient> make_client(PeerId peer, std::uint64_t id) {
    auto c = std::make_unique<TrackerClient>(net_.env(peer), group_, id, candidates_);
    hosts_[peer]->attach_client(group_, *c);
    return c;
  }

  // Founds generation 0 on every live host: the closest `replicas` found it, the others wait as
  // candidates. (Later generations come from reboot(), over the network.)
  void found(const std::vector<raft::CandidatePeer>& live) {
    const raft::RaftConfig cfg = tracker_raft_config(options_.title, group_options_);
    group_ = cfg.group;
    candidates_ = tracker_candidates(options_.title, live);
    const raft::Configuration members = raft::Configuration::of(founding_members(candidates_, options_.replicas));
    for (PeerId p : candidates_) {
      raft::MemoryStorage storage;
      if (members.contains(p)) storage = raft::MemoryStorage(members);
      hosts_[p]->host(cfg, std::move(storage), candidates_, hooks(p, 0));
    }
  }

  raft::RaftHooks hooks(PeerId p, std::uint64_t generation) {
    raft::RaftHooks h;
    h.on_role = [this, p, generation](raft::Role role, raft::Term term) {
      if (role != raft::Role::Leader) return;
      auto [it, inserted] = leaders_.emplace(std::make_pair(generation, term), p);
      if (!inserted && it->second != p) violations_ += "two leaders in term " + std::to_string(term) + "\n";
    };
    h.on_apply = [this, p, generation](raft::Index index, const raft::LogEntry& e, std::span<const std::uint8_t>) {
      auto [it, inserted] = applied_.emplace(std::make_pair(generation, index), e);
      if (!inserted && !(it->second == e))
        violations_ += "peer " + std::to_string(p) + " applied another entry at " + std::to_string(index) + "\n";
    };
    return h;
  }

  TrackerWorldOptions options_;
  MemoryWorld net_;
  std::vector<dht::NodeId> ids_;
  std::vector<std::unique_ptr<TrackerHost>> hosts_;
  TrackerGroupOptions group_options_;
  std::uint64_t generation_ = 0;
  std::uint64_t group_ = 0;
  std::vector<PeerId> candidates_;
  std::unique_ptr<TrackerClient> client_, creator_;
  std::unique_ptr<TrackerBackup> backup_;
  std::unique_ptr<TrackerRebooter> rebooter_;
  std::set<PeerId> lost_;
  std::map<std::pair<std::uint64_t, raft::Term>, PeerId> leaders_;
  std::map<std::pair<std::uint64_t, raft::Index>, raft::LogEntry> applied_;
  std::string violations_;
};

}  // namespace swarmlab::core::tracker::testing
