#include "sim/binding/oracle.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/group_plan.h"
#include "core/moshpit/grid.h"
#include "core/wire.h"

namespace swarmlab::sim {

using core::PeerId;
using core::Seconds;
using core::matchmaking::Group;

class Oracle::PeerCoordinator final : public core::training::Coordinator {
 public:
  PeerCoordinator(Oracle& oracle, core::Environment& env, bool client_mode)
      : oracle_(oracle), env_(env), oracle_alive_(oracle.alive_) {
    oracle_.enroll(env_.self(), this, client_mode);
  }
  ~PeerCoordinator() override {
    *alive_ = false;
    env_.cancel(timeout_);
    for (const Fetch& f : fetches_) env_.cancel(f.turn);
    if (*oracle_alive_) oracle_.leave(env_.self());
  }

  void attach(core::ServiceMux&) override {}  // no messages: the oracle sees everything

  void join(std::vector<PeerId>, Joined done) override {
    env_.schedule(0, [done = std::move(done)] { done(true); });
  }

  void report(const core::progress::LocalProgress& local) override {
    Member& m = oracle_.member(env_.self());
    // Only a change of activity, or new samples from a peer already waiting for its group, can
    // complete a group: a peer still computing towards the step holds every group up anyway.
    const bool matters = !m.reported || m.local.activity != local.activity || static_cast<bool>(done_);
    if (!m.reported || m.local.step != local.step || m.local.lineage != local.lineage ||
        m.local.activity != local.activity)
      oracle_.holders_.reset();
    m.local = local;
    m.reported = true;
    oracle_.estimate_memo_.reset();
    if (matters) oracle_.schedule_check();
  }

  void fetch(ProgressCallback done) override {
    // Answered on the next turn, in the order asked. The callbacks wait here and the destructor
    // cancels their turns, so the closure holds only `this` (no allocation per read).
    fetches_.push_back({std::move(done), 0});
    fetches_.back().turn = env_.schedule(0, [this] {
      ProgressCallback done = std::move(fetches_.front().done);
      fetches_.erase(fetches_.begin());
      done(estimate(env_.now(), {}));
    });
  }

  core::progress::GlobalProgress estimate(Seconds now, std::span<const PeerId> group) const override {
    return oracle_.estimate(now, oracle_.member(env_.self()).local.step, group);
  }

  void member_lost(PeerId) override {}  // the oracle knows who is up

  // Every peer's view is the oracle's one list, this peer included.
  std::span<const core::training::StateHolder> peers_at(std::uint64_t step) const override {
    return oracle_.holders_at(step);
  }

  void set_announcement(std::vector<std::uint8_t> bytes) override {
    Member& m = oracle_.member(env_.self());
    try {
      m.computes = core::matchmaking::decode_announcement(bytes).capacity.compute_sps > 0;
    } catch (const core::DecodeError&) {
      m.computes = false;
    }
    m.announcement = std::move(bytes);
  }

  void look_for_group(GroupCallback done, Seconds timeout, Seconds) override {
    if (done_) throw std::logic_error("oracle: already looking for a group");
    done_ = std::move(done);
    if (std::isfinite(timeout))
      timeout_ = env_.schedule(std::max(0.0, timeout), [this] {
        timeout_ = 0;
        give_up();
      });
    oracle_.schedule_check();
  }

  void cancel_search() override {
    if (!done_) return;
    env_.schedule(0, [this, alive = alive_] {
      if (*alive) give_up();
    });
    // Not looking from now on, although the callback runs on the next turn.
    pending_cancel_ = std::move(done_);
    env_.cancel(std::exchange(timeout_, 0));
  }

  bool looking() const override { return static_cast<bool>(done_); }

  // The oracle hands this peer its group.
  void deliver(Group group) {
    env_.cancel(std::exchange(timeout_, 0));
    GroupCallback done = std::move(done_);
    done_ = nullptr;
    done(std::move(group));
  }

 private:
  void give_up() {
    GroupCallback done = pending_cancel_ ? std::move(pending_cancel_) : std::move(done_);
    pending_cancel_ = nullptr;
    done_ = nullptr;
    if (done) done(std::nullopt);
    oracle_.schedule_check();  // one fewer peer to wait for
  }

  Oracle& oracle_;
  core::Environment& env_;
  std::shared_ptr<bool> oracle_alive_;
  GroupCallback done_, pending_cancel_;
  struct Fetch {
    ProgressCallback done;
    core::TimerHandle turn = 0;
  };
  std::vector<Fetch> fetches_;  // reads not answered yet, oldest first
  core::TimerHandle timeout_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

Oracle::Oracle(Engine& engine, OracleOptions options) : engine_(engine), options_(std::move(options)) {
  if (!(options_.target.batch > 0) && options_.target.per_peer_quota == 0)
    throw std::invalid_argument("oracle: the target needs a positive batch or a per-peer quota");
  if (options_.group_size && *options_.group_size < 2) throw std::invalid_argument("oracle: group size must be at least 2");
}

Oracle::~Oracle() { *alive_ = false; }

std::unique_ptr<core::training::Coordinator> Oracle::coordinator(core::Environment& env, bool client_mode) {
  return std::make_unique<PeerCoordinator>(*this, env, client_mode);
}

void Oracle::enroll(PeerId peer, PeerCoordinator* c, bool client_mode) {
  if (peer < members_.size() && members_[peer].coordinator) throw std::logic_error("oracle: peer enrolled twice");
  if (peer >= members_.size()) members_.resize(peer + 1);
  Member m;
  m.coordinator = c;
  m.client_mode = client_mode;
  members_[peer] = std::move(m);
  holders_.reset();
  estimate_memo_.reset();
}

const std::vector<core::training::StateHolder>& Oracle::holders_at(std::uint64_t step) const {
  if (holders_ && holders_->step == step) return holders_->holders;
  holders_ = Holders{step, {}};
  for (PeerId peer = 0; peer < members_.size(); ++peer)
    if (const Member& m = members_[peer]; m.coordinator && m.reported && m.local.step == step && !m.client_mode && m.local.activity == core::progress::Activity::Training)
      holders_->holders.push_back({peer, m.local.lineage});
  return holders_->holders;
}

void Oracle::leave(PeerId peer) {
  members_[peer] = Member{};
  holders_.reset();
  estimate_memo_.reset();
  schedule_check();
}

core::progress::GlobalProgress Oracle::estimate(Seconds now, std::uint64_t floor_step,
                                               std::span<const core::PeerId> group) const {
  if (estimate_memo_ && estimate_memo_->now == now && estimate_memo_->floor_step == floor_step &&
      std::ranges::equal(estimate_memo_->group, group))
    return estimate_memo_->estimate;
  // Exact counts: every record is as of now (a micro-batch in flight has not happened yet).
  records_.clear();
  for (PeerId peer = 0; peer < members_.size(); ++peer) {
    const Member& m = members_[peer];
    if (!m.coordinator || !m.reported || m.local.activity != core::progress::Activity::Training) continue;
    records_.push_back({peer, m.local.step, m.local.samples, m.local.samples_per_s, now, m.client_mode});
  }
  estimate_memo_ = EstimateMemo{now, floor_step, {group.begin(), group.end()},
                                core::progress::aggregate(records_, now, options_.target, floor_step, group)};
  return estimate_memo_->estimate;
}

void Oracle::schedule_check() {
  if (check_scheduled_) return;
  check_scheduled_ = true;
  engine_.after(0, [this, alive = alive_] {
    if (!*alive) return;
    check_scheduled_ = false;
    check();
  });
}

void Oracle::check() {
  // Most checks find a peer that is not looking yet: nothing is built until every peer that will
  // average is.
  const auto syncing = [](const Member& m) { return m.reported && m.local.activity == core::progress::Activity::Syncing; };
  std::size_t count = 0;
  for (const Member& m : members_) {
    if (!m.coordinator || syncing(m)) continue;
    if (!m.coordinator->looking()) return;  // someone who will average soon is not ready yet
    ++count;
  }
  if (count == 0 || !estimate(engine_.now(), 0, {}).ready) return;
  std::vector<PeerId> looking;
  looking.reserve(count);
  for (PeerId peer = 0; peer < members_.size(); ++peer)
    if (members_[peer].coordinator && !syncing(members_[peer])) looking.push_back(peer);

  std::vector<std::vector<PeerId>> partition;
  if (options_.group_size && *options_.group_size < looking.size()) {
    const core::moshpit::Grid grid(looking.size(), *options_.group_size);
    const core::moshpit::Partition& part = grid.groups_in_round(round_);
    for (std::size_t g = 0; g < part.groups(); ++g) {
      std::vector<PeerId> members;
      for (std::uint32_t k : part.group(g)) members.push_back(looking[k]);
      std::sort(members.begin(), members.end());
      partition.push_back(std::move(members));
    }
  } else {
    partition.push_back(looking);
  }

  std::vector<Group> groups;
  for (const auto& peers : partition) {
    // A group where nobody computes has nothing to average: its peers wait for the next round.
    if (std::none_of(peers.begin(), peers.end(), [this](PeerId p) { return member(p).computes; })) continue;
    Group g;
    g.group_id = next_group_id_++;
    g.leader = peers.front();
    for (PeerId p : peers) g.members.push_back({p, member(p).client_mode, member(p).announcement});
    groups.push_back(std::move(g));
  }
  if (groups.empty()) return;
  const std::uint64_t round = round_++;
  if (groups_formed_) groups_formed_(round, groups);
  // Every member starts at this same instant.
  for (const Group& g : groups)
    for (const auto& m : g.members) member(m.peer).coordinator->deliver(g);
}

}  // namespace swarmlab::sim
