#pragma once
// hivemind's leader/follower matchmaking (docs/dedloc.md §3), over the DHT and the environment
// seam.
//
// A peer looking for a group declares itself under its group key with an expiration
// (now + min_matchmaking_time) and, at the same time, is a potential leader and a potential
// follower:
// - as a follower it asks the declared peers with an earlier (expiration, peer id) than its own,
//   earliest first, to lead it: it sends a join request and waits request_timeout for the answer,
//   then, once accepted, until the leader's expiration (+ request_timeout) for "begin";
// - as a leader it accepts join requests; it begins as soon as it has target_group_size members,
//   or at its expiration if it has at least min_group_size; otherwise it disbands and declares
//   itself again with a new expiration.
// A potential leader that is accepted by an earlier leader hands its followers over (Disband with
// that leader as suggestion). Client-mode peers never declare and never lead.
//
// A follower whose leader dies regroups: at once when the link breaks, otherwise when its wait
// for "begin" times out. After a group forms every member shifts its index into its bits
// (group_key.h), so consecutive rounds mix groups.
//
// See core/matchmaking/README.md for the deviations from hivemind.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/dht/node.h"
#include "core/env.h"
#include "core/matchmaking/group.h"
#include "core/matchmaking/messages.h"

namespace swarmlab::core::matchmaking {

struct MatchmakingConfig {
  std::string prefix = "averaging";
  std::string initial_bits;          // '0'/'1'; its length fixes the grid (empty: one key for all)
  std::uint64_t schema_hash = 0;     // peers averaging different models never group
  std::size_t target_group_size = 8;
  std::size_t min_group_size = 2;
  Seconds min_matchmaking_time = 5;  // hivemind: 5 s (15 s in its optimizer)
  Seconds request_timeout = 3;
  Seconds search_period = 1;         // how often the declared peers are re-read when none is left to ask
  Seconds first_search_delay = 0.1;  // the first re-read comes sooner (declarations stored meanwhile)
  // A leader whose group has fewer members than it expects (set_expected_group_size; not without
  // an expectation) keeps it open past its expiration, for at most this long in all, so that peers
  // a little late still join.
  Seconds max_extension = 3;
  bool client_mode = false;
  std::size_t fetch_responses = 2;   // DHT replicas whose declarations a read merges
  // Whether a group whose members attached these (Matchmaker::set_gathered) has anything to
  // average. A leader whose group has nothing disbands it at its expiration instead of beginning
  // it, and declares again: reducers that finished a round first would otherwise begin a group of
  // their own and miss the round of those with gradients (docs/interpretations.md §30). Unset:
  // every group has.
  std::function<bool(std::span<const Attachment>)> worth_averaging;
  // Told of a member of this peer's last group, or a follower of its own, whose connection broke
  // (on_link_failure: that process is gone). The matchmaker counts it as lost (peer_lost); the
  // caller stops expecting it (set_expected_group_size), so that a leader does not hold its group
  // open for a peer that crashed (docs/interpretations.md §32). Optional.
  std::function<void(PeerId)> member_gone;
  // Diagnostics (optional): one line per decision - requests, answers, timeouts, begins - so that
  // a live run that stalls says who waited on whom.
  std::function<void(const std::string&)> log;
};

struct MatchmakingStats {
  std::uint64_t groups = 0, groups_led = 0, failures = 0;
  std::uint64_t join_requests_sent = 0, request_timeouts = 0, begin_timeouts = 0, leader_failures = 0;
  std::uint64_t disbanded = 0;  // times our leader disbanded us
  std::map<JoinStatus, std::uint64_t> replies_sent, replies_received;
  std::uint64_t malformed = 0, unexpected = 0;
  std::uint64_t fetches = 0;
};

class Matchmaker final : public Service {
 public:
  // Runs once per look_for_group(): the group, or nullopt when the timeout passed (or cancel()).
  using GroupCallback = std::function<void(std::optional<Group>)>;

  // Throws std::invalid_argument on bad bits, target < 2 or min_group_size not in [2, target].
  Matchmaker(Environment& env, dht::DhtNode& dht, MatchmakingConfig config);
  ~Matchmaker() override;
  Matchmaker(const Matchmaker&) = delete;
  Matchmaker& operator=(const Matchmaker&) = delete;

  // Starts looking for a group. Throws std::logic_error if already looking. `due` is when the
  // caller expects to average (the next step's estimated time): as a potential leader it declares
  // itself until then (at least min_matchmaking_time from now), as hivemind schedules its groups.
  // After `timeout` a leader with enough members begins, a follower already accepted waits for its
  // leader, and anyone else gives up. `done` never runs inside this call.
  void look_for_group(GroupCallback done, Seconds timeout = std::numeric_limits<double>::infinity(),
                      Seconds due = 0);
  // Stops looking now (followers are disbanded); `done` gets nullopt.
  void cancel();
  bool looking() const { return looking_; }

  // Attached to our join requests (and our entry in Begin as a leader): what the other members
  // need to plan the round, e.g. encode_announcement() (announcement_codec.h).
  void set_gathered(Attachment data) { gathered_ = std::move(data); }
  // How many peers (this one included) the caller expects to average this time, from what it knows
  // of the collaboration (its live progress records). A leader with fewer holds its group open past
  // its expiration for a while (max_extension). 0: unknown.
  //
  // When a leader begins: with target_group_size members, or at its expiration (when the caller's
  // step is due, so the group forms with the batch) if it holds more than half of the members it
  // expects (else it declares again), or, if the step was already due when it declared (averaging
  // back to back), as soon as it has as many members as its last group, or, after a member was
  // lost (peer_lost, or a crash: member_gone), once the step is due, as soon as it has every member
  // it expects.
  void set_expected_group_size(std::size_t n) { expected_ = n; }
  // An averaging round dropped `peer` (it died or left): until a group is full again or has it
  // back, a leader whose step is due begins as soon as it has every member it expects. A member of
  // this peer's last group that is missing from its next one counts as lost too.
  void peer_lost(PeerId peer) { lost_.insert(peer); }

  const std::string& bits() const { return bits_; }
  std::string current_key() const;
  const MatchmakingConfig& config() const { return config_; }
  const MatchmakingStats& stats() const { return stats_; }

  // An encoded message whose first byte is ServiceId::Matchmaking. Malformed ones are counted and
  // dropped.
  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

 private:
  struct Follower {
    PeerId peer = 0;
    std::uint64_t request_id = 0;
    bool client_mode = false;
    Attachment gathered;
  };
  struct Candidate {
    Seconds expiration = 0;
    PeerId peer = 0;
  };

  void send(PeerId to, const MatchmakingMessage& m);
  // `line` builds the text only when there is a log to write it to.
  template <class Line>
  void note(Line&& line) const {
    if (config_.log) config_.log("matchmaking: " + line());
  }
  void on_join_request(PeerId from, const MatchmakingMessage& m);
  void on_join_reply(PeerId from, const MatchmakingMessage& m);
  void on_begin(PeerId from, const MatchmakingMessage& m);
  void on_disband(PeerId from, const MatchmakingMessage& m);
  void on_leave(PeerId from, const MatchmakingMessage& m);

  // `stored`, when given, runs once the declaration's store finished (whether or not it took).
  void declare(Seconds due = 0, std::function<void()> stored = nullptr);
  void withdraw();
  void store_declaration(const std::string& key, Seconds expiration, bool looking,
                         std::function<void()> stored = nullptr);
  void on_deadline();
  // Begins, disbands or waits, as a potential leader whose group is full or whose time is up.
  void leader_check();
  bool worth_averaging() const;  // config_.worth_averaging of our group, true when unset
  void begin_group();
  void disband_followers(std::optional<PeerId> suggestion);

  void search();
  std::optional<Candidate> next_candidate();
  void send_join(const Candidate& c);
  // Our current (or prospective) leader is gone: back to searching, or give up if time is up.
  void lost_leader(bool tell_leader);
  void fetch();
  void schedule_fetch();

  void give_up();
  void finish(std::optional<Group> group);
  bool following() const { return leader_.has_value() && accepted_; }
  bool requesting() const { return leader_.has_value() && !accepted_; }

  Environment& env_;
  dht::DhtNode& dht_;
  MatchmakingConfig config_;
  std::string bits_;
  Attachment gathered_;
  MatchmakingStats stats_;

  bool looking_ = false;
  bool giving_up_ = false;  // the timeout passed while we were following: stop after this leader
  std::size_t expected_ = 0;
  Seconds extended_ = 0;         // how long this declaration was held open past its expiration
  bool due_on_declare_ = false;  // the caller's step was already due when it declared
  Seconds due_ = 0;              // when the caller's step is due (look_for_group)
  std::set<PeerId> lost_;        // dropped by a round, or missing from a group, and not in one since
  std::set<PeerId> last_members_;
  std::size_t last_group_size_ = 0;
  GroupCallback done_;
  TimerHandle give_up_timer_ = 0;

  // As a potential leader.
  std::string declared_key_;
  Seconds declared_expiration_ = 0;  // 0: not declared
  TimerHandle deadline_timer_ = 0;
  TimerHandle due_timer_ = 0;
  std::vector<Follower> followers_;  // in the order they joined

  // As a follower: the leader we asked (requesting) or that accepted us (following).
  std::optional<PeerId> leader_;
  bool accepted_ = false;
  std::uint64_t request_id_ = 0;
  Seconds leader_expiration_ = 0;
  TimerHandle request_timer_ = 0;  // request_timeout, then the wait for "begin"
  std::uint64_t next_request_id_ = 1;

  // The search.
  std::vector<Candidate> candidates_;  // declared peers from the last read, earliest first
  std::map<PeerId, Seconds> asked_;    // peer → the declared expiration it had when we asked it
  std::optional<PeerId> suggested_;    // a leader named by a rejection or a disband: ask it next
  bool fetch_in_flight_ = false;
  TimerHandle fetch_timer_ = 0;
  Seconds last_fetch_ = -std::numeric_limits<double>::infinity();
  int empty_fetches_ = 0;  // reads in a row that left nobody to ask (the re-read backs off)

  // DHT callbacks may outlive this object; they check this flag first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::matchmaking
