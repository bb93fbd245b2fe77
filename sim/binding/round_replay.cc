#include "sim/binding/round_replay.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>

#include "core/codec/codec.h"
#include "core/wire.h"

namespace swarmlab::sim {

using core::averaging::ButterflyRound;
using core::averaging::RoundOutcome;
using core::averaging::RoundPlan;
using core::averaging::Timeouts;

namespace {
// Other traffic a member's links may carry while a round is replayed: control messages (DHT,
// matchmaking, progress), never a state download or another round.
constexpr std::uint64_t kQuietBytes = 1 << 20;
// A round is recorded only if its members started within this share of its length of each other.
constexpr double kRecordSkew = 0.01;
}  // namespace

class RoundReplay::PeerAverager final : public core::averaging::Averager {
 public:
  PeerAverager(RoundReplay& replay, core::Environment& env, core::averaging::ReduceCost cost)
      : replay_(replay), env_(env), inner_(env, nullptr, cost) {}

  void start_round(RoundPlan plan, std::span<float> values, Timeouts timeouts, ButterflyRound::Done done) override {
    replay_.start(*this, std::move(plan), values, timeouts, std::move(done));
  }
  // Replayed rounds run no protocol and are not remembered; group ids come from per-peer seeded
  // streams in the simulator and do not repeat.
  bool has_round(std::uint64_t round_id) const override { return inner_.has_round(round_id); }
  void handle(PeerId from, const core::Message& message) override { inner_.handle(from, message); }
  void on_link_failure(PeerId peer) override { inner_.on_link_failure(peer); }

  core::Environment& env() { return env_; }
  core::averaging::AveragingService& inner() { return inner_; }
  const std::shared_ptr<bool>& alive() const { return alive_; }
  ~PeerAverager() override { *alive_ = false; }

 private:
  RoundReplay& replay_;
  core::Environment& env_;
  core::averaging::AveragingService inner_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

RoundReplay::RoundReplay(SimWorld& world, std::function<LinkSpec(PeerId)> link_of,
                         std::function<double(PeerId)> next_change, std::function<double(PeerId, PeerId)> pair_cap)
    : world_(world), link_of_(std::move(link_of)), next_change_(std::move(next_change)),
      pair_cap_(std::move(pair_cap)) {}

RoundReplay::~RoundReplay() { *alive_ = false; }

std::unique_ptr<core::averaging::Averager> RoundReplay::averager(core::Environment& env,
                                                                  core::averaging::ReduceCost cost) {
  return std::make_unique<PeerAverager>(*this, env, cost);
}

std::vector<std::uint8_t> RoundReplay::head_of(const RoundPlan& plan, std::vector<std::size_t>& order) const {
  // Canonical: members by what they are in the round (link, whether they send, their span by its
  // parts and its size in KiB; the largest-remainder split moves single elements between members
  // from one group order to the next, which changes no timing that matters), ties in plan order.
  // Peer ids are left out: alike peers are interchangeable.
  const double bytes_per_element = core::codec::bytes_per_element(plan.codec);
  struct Member {
    LinkSpec link;
    bool sends;
    std::uint32_t parts;
    std::uint64_t kib;
    auto tuple() const { return std::make_tuple(link.download_bps, link.upload_bps, link.latency_s, sends, parts, kib); }
  };
  std::vector<Member> described(plan.size());
  for (std::size_t m = 0; m < plan.size(); ++m)
    described[m] = {link_of_(plan.members[m]), plan.sends(m), plan.parts_in_span(m),
                    static_cast<std::uint64_t>(static_cast<double>(plan.span_length(m)) * bytes_per_element / 1024)};
  order.resize(plan.size());
  for (std::size_t m = 0; m < order.size(); ++m) order[m] = m;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return described[a].tuple() < described[b].tuple(); });
  // Written in place; only ever compared with other heads of this process, so no wire format
  // applies.
  std::vector<std::uint8_t> head(1 + 8 + order.size() * 37);
  std::uint8_t* at = head.data();
  const auto put = [&at](auto v) {
    std::memcpy(at, &v, sizeof v);
    at += sizeof v;
  };
  put(static_cast<std::uint8_t>(plan.codec));
  put(std::uint64_t{plan.part_bytes});
  for (std::size_t m : order) {
    const Member& d = described[m];
    put(double{d.link.download_bps});
    put(double{d.link.upload_bps});
    put(double{d.link.latency_s});
    put(static_cast<std::uint8_t>(d.sends ? 1 : 0));
    put(std::uint32_t{d.parts});
    put(std::uint64_t{d.kib});
  }
  return head;
}

template <typename F>
bool RoundReplay::for_each_pair(const RoundPlan& plan, const std::vector<std::size_t>& order, F&& f) const {
  for (std::size_t m : order)
    for (std::size_t j : order)
      if (!f(plan.pace(m, j), m == j ? 0.0 : pair_cap_(plan.members[m], plan.members[j]))) return false;
  return true;
}

std::vector<double> RoundReplay::pairs_of(const RoundPlan& plan, const std::vector<std::size_t>& order) const {
  std::vector<double> pairs;
  pairs.reserve(2 * order.size() * order.size());
  for_each_pair(plan, order, [&](double pace, double cap) {
    pairs.push_back(pace);
    pairs.push_back(cap);
    return true;
  });
  return pairs;
}

bool RoundReplay::same_pairs(const RoundPlan& plan, const std::vector<std::size_t>& order, const std::vector<double>& pairs) const {
  // Bit for bit, as a key of bytes would compare, and without building this round's pairs: most
  // rounds match the one recording of their head.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  std::size_t at = 0;
  return for_each_pair(plan, order, [&](double pace, double cap) {
    const bool equal = same(pace, pairs[at]) && same(cap, pairs[at + 1]);
    at += 2;
    return equal;
  });
}

bool RoundReplay::is_recorded(const std::vector<std::uint8_t>& head, const std::vector<double>& pairs) const {
  const auto it = recorded_.find(head);
  if (it == recorded_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const Recorded& r) {
    return r.pairs.size() == pairs.size() && std::memcmp(r.pairs.data(), pairs.data(), pairs.size() * sizeof(double)) == 0;
  });
}

const RoundReplay::Recorded* RoundReplay::find_recording(const RoundPlan& plan, const std::vector<std::uint8_t>& head,
                                                         const std::vector<std::size_t>& order) {
  // The same pacing matrix (one object: the memo keeps it alive, so its address is not reused),
  // the same members in the same canonical order, and caps that are fixed: the same pairs.
  if (last_.recording && plan.pace_bps == last_.pace && plan.members == last_.members && order == last_.order &&
      head == last_.head)
    return last_.recording;
  const auto it = recorded_.find(head);
  if (it == recorded_.end()) return nullptr;
  for (const Recorded& r : it->second)
    if (same_pairs(plan, order, r.pairs)) {
      last_ = {plan.pace_bps, plan.members, order, head, &r};
      return &r;
    }
  return nullptr;
}

bool RoundReplay::quiet(const std::vector<PeerId>& members) const {
  return std::all_of(members.begin(), members.end(), [this](PeerId p) {
    return world_.is_up(p) && world_.bytes_in_flight(p) < kQuietBytes;
  });
}

void RoundReplay::start(PeerAverager& a, RoundPlan plan, std::span<float> values, Timeouts timeouts,
                        ButterflyRound::Done done) {
  const std::uint64_t id = plan.round_id;
  const auto me = plan.index_of(a.env().self());
  auto [it, fresh] = rounds_.try_emplace(id);
  Round& r = it->second;
  if (fresh) {
    const std::size_t n = plan.size();
    r.members = plan.members;
    r.has_started.assign(n, false);
    r.has_finished.assign(n, false);
    r.span_share.assign(n, 0);
    for (std::size_t m = 0; m < n; ++m) r.span_share[m] = plan.span_share(m);
    r.down_at.assign(n, std::numeric_limits<double>::infinity());
    r.finish_at.assign(n, 0);
    r.sent0.assign(n, 0);
    r.received0.assign(n, 0);
    r.sent.assign(n, 0);
    r.received.assign(n, 0);
    std::vector<std::size_t> order;
    r.head = head_of(plan, order);
    r.position.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) r.position[order[k]] = k;
    const Recorded* rec = find_recording(plan, r.head, order);
    if (values.empty() && rec && quiet(r.members) && newcomers_.empty()) {
      r.mode = Mode::Replay;
      r.recorded = rec;
      // A member that has not started a sender timeout after the first: the replay is off.
      world_.engine().after(timeouts.sender, [this, id, alive = alive_] {
        if (!*alive) return;
        const auto it = rounds_.find(id);
        if (it != rounds_.end() && it->second.mode == Mode::Replay && !it->second.scheduled) convert(id);
      });
    } else {
      r.mode = Mode::Simulate;
      ++stats_.simulated;
      // A download in flight shares a member's links with the round from its start.
      if (std::any_of(r.members.begin(), r.members.end(), [this](PeerId p) { return loaded(p); })) r.clean = false;
      // Kept for recording it at the end, unless such a round is recorded already.
      if (!rec) r.pairs = pairs_of(plan, order);
    }
  }
  if (!me || r.has_started[*me]) {  // not a member, or twice: the core's own checks will say so
    a.inner().start_round(std::move(plan), values, timeouts, std::move(done));
    return;
  }
  r.has_started[*me] = true;
  newcomers_.erase(a.env().self());
  ++r.started;
  if (r.started == 1) r.first_start = world_.engine().now();
  r.last_start = world_.engine().now();
  r.sent0[*me] = world_.bytes_sent(a.env().self());
  r.received0[*me] = world_.bytes_received(a.env().self());
  Start s{&a, std::move(plan), values, timeouts, std::move(done)};
  if (r.mode == Mode::Simulate) return simulate(id, *me, std::move(s));
  r.waiting.emplace(*me, std::move(s));
  if (r.started == r.members.size()) replay_all(id);
}

void RoundReplay::simulate(std::uint64_t id, std::size_t member, Start s) {
  ButterflyRound::Done done = std::move(s.done);
  s.averager->inner().start_round(std::move(s.plan), s.values, s.timeouts,
                                  [this, id, member, done = std::move(done), alive = alive_](const RoundOutcome& o) {
                                    if (*alive) on_simulated(id, member, o, done);
                                    else if (done) done(o);
                                  });
}

void RoundReplay::on_simulated(std::uint64_t id, std::size_t member, const RoundOutcome& o, const ButterflyRound::Done& done) {
  const auto it = rounds_.find(id);
  if (it != rounds_.end()) {
    Round& r = it->second;
    const PeerId peer = r.members[member];
    r.finish_at[member] = world_.engine().now();
    r.sent[member] = world_.bytes_sent(peer) - r.sent0[member];
    r.received[member] = world_.bytes_received(peer) - r.received0[member];
    if (!o.completed || !o.dropped_senders.empty() || !o.dropped_reducers.empty()) r.clean = false;
  }
  if (done) done(o);
  member_finished(id, member);
}

void RoundReplay::member_finished(std::uint64_t id, std::size_t member) {
  const auto it = rounds_.find(id);
  if (it == rounds_.end()) return;
  Round& r = it->second;
  if (r.has_finished[member]) return;
  r.has_finished[member] = true;
  if (++r.finished < r.members.size()) return;
  // (No pairs: such a round was recorded before this one started.)
  if (r.mode == Mode::Simulate && r.clean && !r.pairs.empty() && started_together(r) && !is_recorded(r.head, r.pairs)) {
    Recorded rec;
    const std::size_t n = r.members.size();
    rec.finish.assign(n, 0);
    rec.sent.assign(n, 0);
    rec.received.assign(n, 0);
    for (std::size_t m = 0; m < n; ++m) {
      const std::size_t k = r.position[m];
      rec.finish[k] = std::max(0.0, r.finish_at[m] - r.last_start);
      rec.sent[k] = r.sent[m];
      rec.received[k] = r.received[m];
    }
    rec.pairs = std::move(r.pairs);
    recorded_[std::move(r.head)].push_back(std::move(rec));
    ++stats_.recorded;
  }
  rounds_.erase(it);
}

bool RoundReplay::started_together(const Round& r) {
  core::Seconds longest = 0;
  for (const core::Seconds f : r.finish_at) longest = std::max(longest, f - r.last_start);
  return r.last_start - r.first_start <= kRecordSkew * longest;
}

void RoundReplay::replay_all(std::uint64_t id) {
  Round& r = rounds_.at(id);
  const core::Seconds started = r.last_start;  // every member's outcome counts from the last start
  core::Seconds longest = 0;
  for (const core::Seconds f : r.recorded->finish) longest = std::max(longest, f);
  const core::Seconds end = started + longest;
  // A link changes, a member leaves or a peer arrives mid-round, or a newcomer may load the state.
  if (!newcomers_.empty()) return convert(id);
  for (PeerId p : r.members)
    if (next_change_(p) <= end) return convert(id);
  r.scheduled = true;
  ++stats_.replayed;
  for (auto& [m, s] : r.waiting) {
    core::Environment& env = s.averager->env();
    const PeerId peer = env.self();
    std::shared_ptr<bool> averager_alive = s.averager->alive();
    const std::size_t k = r.position[m];
    const std::uint64_t sent = r.recorded->sent[k], received = r.recorded->received[k];
    world_.charge(peer, sent, 0);
    env.schedule(r.recorded->finish[k], [this, id, member = m, peer, received, started, done = std::move(s.done),
                                         alive = alive_, averager_alive = std::move(averager_alive)] {
      if (!*alive || !*averager_alive) return;
      RoundOutcome o;
      o.round_id = id;
      o.completed = true;
      o.started = started;
      o.finished = world_.engine().now();
      o.fraction_averaged = 1;
      const Round& round = rounds_.at(id);
      for (std::size_t k = 0; k < round.members.size(); ++k)
        if (k != member && round.span_share[k] > 0 && round.down_at[k] < o.finished) {
          o.dropped_reducers.push_back(round.members[k]);
          o.unaveraged_spans.push_back(round.members[k]);
          o.fraction_averaged -= round.span_share[k];
        }
      world_.charge(peer, 0, received);
      if (done) done(o);
      member_finished(id, member);
    });
  }
  r.waiting.clear();
}

void RoundReplay::convert(std::uint64_t id) {
  const auto it = rounds_.find(id);
  if (it == rounds_.end() || it->second.mode != Mode::Replay) return;
  Round& r = it->second;
  r.mode = Mode::Simulate;
  r.clean = false;
  ++stats_.converted;
  ++stats_.simulated;
  std::map<std::size_t, Start> waiting = std::move(r.waiting);
  r.waiting.clear();
  std::vector<std::size_t> gone;
  for (auto& [m, s] : waiting) {
    if (world_.is_up(r.members[m])) simulate(id, m, std::move(s));
    else gone.push_back(m);
  }
  for (std::size_t m : gone) member_finished(id, m);
}

void RoundReplay::peer_joined(PeerId peer) { newcomers_.insert(peer); }

void RoundReplay::peer_down(PeerId peer) {
  newcomers_.erase(peer);
  download_ended(peer);  // its own download dies with it; one it served ends at the other end
  std::vector<std::pair<std::uint64_t, std::size_t>> affected;
  for (auto& [id, r] : rounds_) {
    const auto m = std::find(r.members.begin(), r.members.end(), peer);
    if (m == r.members.end()) continue;
    r.clean = false;
    const auto index = static_cast<std::size_t>(m - r.members.begin());
    r.down_at[index] = std::min(r.down_at[index], world_.engine().now());
    affected.emplace_back(id, index);
  }
  for (const auto& [id, m] : affected) {
    const auto it = rounds_.find(id);
    if (it == rounds_.end()) continue;
    Round& r = it->second;
    if (!r.has_started[m]) r.has_started[m] = true, ++r.started;
    r.waiting.erase(m);
    // Not everyone had started a replayed round: the failure is the protocol's to handle.
    if (r.mode == Mode::Replay && !r.scheduled) convert(id);
    member_finished(id, m);  // its side ends with it
  }
}

void RoundReplay::mark_unclean(PeerId peer) {
  for (auto& [id, r] : rounds_)
    if (std::find(r.members.begin(), r.members.end(), peer) != r.members.end()) r.clean = false;
}

void RoundReplay::download_began(PeerId downloader, PeerId provider) {
  download_ended(downloader);  // a peer downloads one state at a time
  downloads_[downloader] = provider;
  for (const PeerId p : {downloader, provider}) {
    ++loaded_[p];
    mark_unclean(p);
  }
}

void RoundReplay::download_ended(PeerId downloader) {
  const auto it = downloads_.find(downloader);
  if (it == downloads_.end()) return;
  for (const PeerId p : {downloader, it->second})
    if (--loaded_[p] == 0) loaded_.erase(p);
  downloads_.erase(it);
}

}  // namespace swarmlab::sim
