#pragma once
// A Raft group under test: server peers (RaftNode + MemoryStorage + KvStateMachine behind a
// ServiceMux) and key-value client peers in the core's memory world, on a network that (seeded)
// loses, duplicates, delays and reorders messages and partitions peers: the real bindings deliver
// reliably and in order per pair, and Raft must not depend on either. A recorder that checks Raft's safety
// properties as the run goes:
//
// - Election Safety: at most one leader per term (across crashes and restarts);
// - State Machine Safety: every node applies the same entry at a given index, and a snapshot
//   installed up to index i agrees with what was applied at i;
// - Leader Completeness: a new leader's log holds every entry applied anywhere so far.
//
// and records the clients' operations for the linearizability checker.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/raft/kv_state_machine.h"
#include "core/raft/messages.h"
#include "core/raft/node.h"
#include "core/raft/storage.h"
#include "core/service_mux.h"
#include "linearizability.h"
#include "support/memory_world.h"

namespace swarmlab::core::raft::testing {

using core::testing::LinkFaults;
using core::testing::MemoryWorld;

struct ClusterOptions {
  std::size_t servers = 3;
  std::vector<PeerId> members;  // founding members; empty: every server. The others start empty.
  std::size_t clients = 0;
  RaftConfig raft;
  LinkFaults faults;
  std::uint64_t seed = 1;
};

class Cluster;

// A key-value client: one operation at a time, retried (same seq, so executed at most once) until
// it succeeds, following leader hints and moving to another server on silence.
class KvClient final : public Service {
 public:
  struct Options {
    std::vector<std::string> keys = {"a", "b", "c"};
    Seconds request_timeout = 0.2;
    Seconds think_max = 0.02;
    Seconds retry_backoff = 0.02;
  };

  KvClient(Cluster& cluster, PeerId self, std::uint64_t id, Options options);
  ~KvClient() override { stop(); }

  // Issues random operations until `until`, then finishes the one in flight (if it can).
  void run_workload(Seconds until);
  void stop();
  bool busy() const { return current_.has_value(); }
  std::uint64_t completed() const { return completed_; }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId) override {}

 private:
  void next_op();
  void send_current();
  void retry(Seconds delay, bool next_server);

  Cluster& cluster_;
  Environment& env_;
  std::uint64_t id_;
  Options options_;
  Seconds until_ = 0;
  std::uint64_t seq_ = 0;
  std::optional<std::size_t> current_;  // index into the cluster's history
  PeerId target_ = 0;
  TimerHandle timer_ = 0;
  std::uint64_t completed_ = 0;
};

class Cluster {
 public:
  // Hands a server's Raft messages to its node while it is up (a crashed server has none).
  struct Forward final : Service {
    Cluster* cluster = nullptr;
    PeerId peer = 0;
    void handle(PeerId from, const Message& m) override {
      if (RaftNode* n = cluster->node(peer)) n->handle(from, m);
    }
    void on_link_failure(PeerId) override {}
  };
  struct Server {
    MemoryStorage storage;
    std::unique_ptr<KvStateMachine> machine;
    std::unique_ptr<RaftNode> node;
    Forward forward;
    ServiceMux mux;
  };

  explicit Cluster(ClusterOptions options)
      : options_(std::move(options)),
        net_(options_.servers + options_.clients, core::testing::PeerSpec{0, 0, 0}, options_.seed) {
    net_.set_faults(options_.faults);
    if (options_.members.empty())
      for (PeerId p = 0; p < options_.servers; ++p) options_.members.push_back(p);
    const Configuration founding = Configuration::of(options_.members);
    servers_.resize(options_.servers);
    for (PeerId p = 0; p < options_.servers; ++p) {
      servers_[p] = std::make_unique<Server>();
      Server& s = *servers_[p];
      if (founding.contains(p)) s.storage = MemoryStorage(founding);
      s.forward.cluster = this;
      s.forward.peer = p;
      s.mux.add(ServiceId::Raft, s.forward);
      net_.env(p).set_sink(&s.mux);
      start(p);
    }
    for (std::size_t c = 0; c < options_.clients; ++c) {
      const PeerId peer = static_cast<PeerId>(options_.servers + c);
      clients_.push_back(std::make_unique<KvClient>(*this, peer, c + 1, KvClient::Options{}));
      net_.env(peer).set_sink(clients_.back().get());
    }
  }

  ~Cluster() {
    clients_.clear();
    for (auto& s : servers_) s->node.reset();
  }

  MemoryWorld& net() { return net_; }
  Seconds now() const { return net_.now(); }
  std::size_t servers() const { return servers_.size(); }
  const ClusterOptions& options() const { return options_; }
  RaftNode* node(PeerId p) { return servers_.at(p)->node.get(); }
  Server& server(PeerId p) { return *servers_.at(p); }
  KvClient& client(std::size_t i) { return *clients_.at(i); }
  std::size_t clients() const { return clients_.size(); }

  void run_until(Seconds t) { net_.run_until(t); }
  void run_for(Seconds d) { net_.run_for(d); }

  // Crash: the node object is destroyed (its timers must all be cancelled) and its volatile state
  // is lost; storage survives. Nobody is told (Raft hears of failures only through its timeouts),
  // and its messages still in flight are lost with it.
  void crash(PeerId p) {
    Server& s = server(p);
    if (!s.node) return;
    s.node.reset();
    s.machine.reset();
    if (net_.outstanding_timers(p) != 0)
      violation("node " + std::to_string(p) + " left " + std::to_string(net_.outstanding_timers(p)) +
                " timers behind when destroyed");
    net_.set_down(p, MemoryWorld::Departure::Silent);
    ++crashes_;
  }
  void restart(PeerId p) {
    if (server(p).node) return;
    net_.set_up(p);
    start(p);
  }
  bool is_up(PeerId p) { return node(p) != nullptr; }

  // The leader of the highest term among running nodes, if any.
  std::optional<PeerId> leader() {
    std::optional<PeerId> best;
    for (PeerId p = 0; p < servers(); ++p) {
      RaftNode* n = node(p);
      if (n && n->is_leader() && (!best || n->term() > node(*best)->term())) best = p;
    }
    return best;
  }
  // Runs until some node is leader (and stays so for `settle`), or until `deadline`.
  std::optional<PeerId> run_until_leader(Seconds deadline, Seconds settle = 0) {
    while (now() < deadline) {
      if (auto l = leader()) {
        if (settle <= 0) return l;
        const Term t = node(*l)->term();
        run_for(settle);
        if (node(*l) && node(*l)->is_leader() && node(*l)->term() == t) return l;
        continue;
      }
      if (!net_.step()) break;
    }
    return leader();
  }
  // Proposes a put through the current leader, bypassing clients (for deterministic tests).
  std::optional<Index> propose_put(const std::string& key, const std::string& value) {
    auto l = leader();
    if (!l) return std::nullopt;
    return node(*l)->propose(encode_kv_command({KvOp::Put, 0, 0, key, value, {}}));
  }

  // --- Safety record ---------------------------------------------------------------------------
  void violation(std::string what) {
    if (violations_.size() < 20) violations_.push_back("t=" + std::to_string(now()) + ": " + std::move(what));
  }
  const std::vector<std::string>& violations() const { return violations_; }
  std::string violations_text() const {
    std::string out;
    for (const auto& v : violations_) out += v + "\n";
    return out;
  }
  // Entries applied by anyone, by index: the committed log as observed.
  struct Committed {
    Term term;
    std::size_t hash;
  };
  const std::map<Index, Committed>& committed() const { return committed_; }
  const std::map<Term, PeerId>& leaders_by_term() const { return leaders_; }
  // Elections won: (time, peer, term).
  struct Election {
    Seconds at;
    PeerId peer;
    Term term;
  };
  const std::vector<Election>& elections() const { return elections_; }
  std::uint64_t crashes() const { return crashes_; }
  // Committed membership changes (each single-server add or remove).
  std::size_t config_changes() const { return config_changes_.size(); }

  // Checks that `p`'s log (or snapshot) holds every entry observed committed so far.
  void check_holds_committed(PeerId p, std::string_view when) {
    RaftNode* n = node(p);
    for (const auto& [index, c] : committed_) {
      if (index < n->snapshot_index()) continue;  // covered by its snapshot
      const auto t = n->term_at(index);
      if (!t || *t != c.term) {
        violation(std::string(when) + ": node " + std::to_string(p) + " lacks committed entry " +
                  std::to_string(index) + " (term " + std::to_string(c.term) + ")");
        return;
      }
    }
  }

  // After the run has been quiet for a while: every running member has applied everything the
  // leader committed and holds the same key-value data. Returns what differs, or "".
  std::string convergence() {
    auto l = leader();
    if (!l) return "no leader";
    RaftNode& lead = *node(*l);
    for (PeerId m : lead.config().members) {
      RaftNode* n = node(m);
      if (!n) continue;
      if (n->applied_index() != lead.commit_index())
        return "node " + std::to_string(m) + " applied " + std::to_string(n->applied_index()) + " of " +
               std::to_string(lead.commit_index());
      if (server(m).machine->data() != server(*l).machine->data())
        return "node " + std::to_string(m) + " holds other data than the leader";
    }
    return "";
  }
  // Lets every client finish: no new operations, and time for the ones in flight.
  void drain_clients(Seconds time) {
    for (auto& c : clients_) c->run_workload(0);
    run_for(time);
  }
  std::uint64_t completed_ops() const {
    std::uint64_t n = 0;
    for (const auto& c : clients_) n += c->completed();
    return n;
  }

  // --- Client history --------------------------------------------------------------------------
  std::vector<KvOperation>& history() { return history_; }
  std::uint64_t tick() { return ++history_clock_; }
  bool linearizable(std::string* why) const { return LinearizabilityChecker::check(history_, why); }

  std::vector<PeerId> server_ids() const {
    std::vector<PeerId> out;
    for (PeerId p = 0; p < servers_.size(); ++p) out.push_back(p);
    return out;
  }

 private:
  void start(PeerId p) {
    Server& s = server(p);
    s.machine = std::make_unique<KvStateMachine>();
    RaftHooks hooks;
    hooks.on_role = [this, p](Role role, Term term) {
      if (role != Role::Leader) return;
      auto [it, inserted] = leaders_.emplace(term, p);
      if (!inserted && it->second != p)
        violation("two leaders in term " + std::to_string(term) + ": " + std::to_string(it->second) + " and " +
                  std::to_string(p));
      elections_.push_back({now(), p, term});
      check_holds_committed(p, "new leader");
    };
    hooks.on_apply = [this, p](Index index, const LogEntry& e, std::span<const std::uint8_t>) {
      const std::size_t h = std::hash<std::string_view>{}(
          std::string_view(reinterpret_cast<const char*>(e.data.data()), e.data.size()));
      if (e.type == EntryType::Config) config_changes_.insert(index);
      auto [it, inserted] = committed_.emplace(index, Committed{e.term, h});
      if (!inserted && (it->second.term != e.term || it->second.hash != h))
        violation("node " + std::to_string(p) + " applied a different entry at " + std::to_string(index));
    };
    hooks.on_install_snapshot = [this, p](Index index, Term term) {
      auto it = committed_.find(index);
      if (it != committed_.end() && it->second.term != term)
        violation("node " + std::to_string(p) + " installed a snapshot that disagrees at " + std::to_string(index));
    };
    s.node = std::make_unique<RaftNode>(net_.env(p), options_.raft, s.storage, *s.machine, std::move(hooks));
  }

  ClusterOptions options_;
  MemoryWorld net_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::unique_ptr<KvClient>> clients_;
  std::vector<std::string> violations_;
  std::map<Index, Committed> committed_;
  std::set<Index> config_changes_;
  std::map<Term, PeerId> leaders_;
  std::vector<Election> elections_;
  std::uint64_t crashes_ = 0;
  std::vector<KvOperation> history_;
  std::uint64_t history_clock_ = 0;
};

// ---------------------------------------------------------------------------------------------

inline KvClient::KvClient(Cluster& cluster, PeerId self, std::uint64_t id, Options options)
    : cluster_(cluster), env_(cluster.net().env(self)), id_(id), options_(std::move(options)) {
  target_ = static_cast<PeerId>(env_.rng().below(cluster_.servers()));
}

inline void KvClient::stop() {
  env_.cancel(timer_);
  timer_ = 0;
}

inline void KvClient::run_workload(Seconds until) {
  until_ = until;
  if (!current_) next_op();
}

inline void KvClient::next_op() {
  if (env_.now() >= until_) return;
  Rng& rng = env_.rng();
  KvOperation op;
  op.client = id_;
  op.key = options_.keys[rng.below(options_.keys.size())];
  const std::uint64_t r = rng.below(10);
  op.op = r < 4 ? KvOp::Put : r < 7 ? KvOp::Get : KvOp::Cas;
  op.value = std::to_string(id_) + "." + std::to_string(seq_ + 1);
  if (op.op == KvOp::Cas) {
    // Expect a value some client may have written: a recent one of this client or another's.
    const std::uint64_t other = 1 + rng.below(3);
    op.expected = std::to_string(other) + "." + std::to_string(seq_ > 2 ? seq_ - rng.below(3) : 1);
  }
  op.call = cluster_.tick();
  ++seq_;
  cluster_.history().push_back(op);
  current_ = cluster_.history().size() - 1;
  send_current();
}

inline void KvClient::send_current() {
  const KvOperation& op = cluster_.history()[*current_];
  RaftMessage m;
  m.kind = MessageKind::ClientRequest;
  m.group = cluster_.options().raft.group;
  m.request_id = seq_;
  m.data = encode_kv_command({op.op, id_, seq_, op.key, op.value, op.expected});
  env_.send(target_, Message{encode(m), 0});
  env_.cancel(timer_);
  timer_ = env_.schedule(options_.request_timeout, [this] {
    timer_ = 0;
    target_ = static_cast<PeerId>((target_ + 1) % cluster_.servers());
    send_current();
  });
}

inline void KvClient::retry(Seconds delay, bool next_server) {
  if (next_server) target_ = static_cast<PeerId>((target_ + 1) % cluster_.servers());
  env_.cancel(timer_);
  timer_ = env_.schedule(delay, [this] {
    timer_ = 0;
    send_current();
  });
}

inline void KvClient::handle(PeerId, const Message& message) {
  RaftMessage m;
  try {
    m = decode(message.bytes, WireLimits{});
  } catch (const DecodeError&) {
    return;
  }
  if (m.kind != MessageKind::ClientReply || !current_ || m.request_id != seq_) return;
  if (m.status == ClientStatus::NotLeader) {
    if (m.leader && *m.leader < cluster_.servers() && *m.leader != target_) {
      target_ = *m.leader;
      retry(0, false);
    } else {
      retry(options_.retry_backoff, true);
    }
    return;
  }
  KvOperation& op = cluster_.history()[*current_];
  try {
    op.result = decode_kv_result(m.data);
  } catch (const DecodeError&) {
    op.result = {KvStatus::Malformed, std::nullopt};
  }
  op.ret = cluster_.tick();
  current_.reset();
  ++completed_;
  env_.cancel(timer_);
  timer_ = 0;
  if (m.leader) target_ = *m.leader;
  const Seconds think = options_.think_max * env_.rng().uniform();
  timer_ = env_.schedule(think, [this] {
    timer_ = 0;
    next_op();
  });
}

}  // namespace swarmlab::core::raft::testing
