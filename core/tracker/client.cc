#include "core/tracker/client.h"

#include <algorithm>

namespace swarmlab::core::tracker {

TrackerClient::TrackerClient(Environment& env, std::uint64_t group, std::uint64_t client_id,
                             std::vector<PeerId> servers, TrackerClientOptions options)
    : env_(env), group_(group), client_id_(client_id), servers_(std::move(servers)), options_(std::move(options)) {}

TrackerClient::~TrackerClient() { env_.cancel(timer_); }

std::uint64_t TrackerClient::submit(TrackerCommand command, Callback done) {
  command.client = client_id_;
  command.seq = next_seq_++;
  queue_.push_back({std::move(command), std::move(done), 0});
  if (queue_.size() == 1) {
    head_since_ = env_.now();
    send_head();
  }
  return queue_.back().command.seq;
}

void TrackerClient::retarget(std::uint64_t group, std::vector<PeerId> servers) {
  group_ = group;
  servers_ = std::move(servers);
  target_ = 0;
  leader_.reset();
  head_since_ = env_.now();
  if (!queue_.empty()) send_head();
}

void TrackerClient::next_server() {
  if (leader_) {
    // Move past the peer that failed us, in list order.
    auto it = std::find(servers_.begin(), servers_.end(), *leader_);
    if (it != servers_.end()) target_ = static_cast<std::size_t>(it - servers_.begin());
    leader_.reset();
  }
  if (!servers_.empty()) target_ = (target_ + 1) % servers_.size();
}

void TrackerClient::send_head() {
  env_.cancel(timer_);
  timer_ = 0;
  if (queue_.empty()) return;
  Pending& head = queue_.front();
  if (servers_.empty() && !leader_) return;  // nowhere to send until retarget()
  if (options_.max_attempts > 0 && head.attempts >= options_.max_attempts) {
    ++stats_.gave_up;
    finish_head(std::nullopt);
    return;
  }
  ++head.attempts;
  raft::RaftMessage m;
  m.kind = raft::MessageKind::ClientRequest;
  m.group = group_;
  m.request_id = head.command.seq;
  m.data = encode_tracker_command(head.command);
  const PeerId to = leader_ ? *leader_ : servers_[target_];
  if (to != env_.self()) {  // a peer cannot message itself: the timeout moves on
    env_.send(to, Message{raft::encode(m), 0});
    ++stats_.requests_sent;
  }
  timer_ = env_.schedule(options_.request_timeout, [this] {
    timer_ = 0;
    ++stats_.timeouts;
    next_server();
    send_head();
  });
}

void TrackerClient::arm_timer(Seconds delay) {
  env_.cancel(timer_);
  timer_ = env_.schedule(delay, [this] {
    timer_ = 0;
    send_head();
  });
}

void TrackerClient::finish_head(const std::optional<TrackerResult>& result) {
  Pending head = std::move(queue_.front());
  queue_.pop_front();
  head_since_ = env_.now();
  if (result && is_update(head.command.op) && result->status != TrackerStatus::Stale &&
      result->status != TrackerStatus::Malformed)
    acknowledged_.push_back(head.command.seq);
  if (!queue_.empty()) send_head();
  if (head.done) head.done(head.command.seq, result);  // last: the callback may submit more
}

void TrackerClient::handle(PeerId from, const Message& message) {
  raft::RaftMessage m;
  try {
    m = raft::decode(message.bytes, options_.limits);
  } catch (const DecodeError&) {
    ++stats_.malformed;
    return;
  }
  if (m.kind != raft::MessageKind::ClientReply || m.group != group_ || queue_.empty() ||
      m.request_id != queue_.front().command.seq)
    return;  // stale or duplicated reply
  if (m.status == raft::ClientStatus::NotLeader) {
    ++stats_.redirects;
    if (m.leader && *m.leader != from && *m.leader != env_.self()) {
      leader_ = *m.leader;
      arm_timer(0);
    } else {
      leader_.reset();
      if (!servers_.empty()) {
        auto it = std::find(servers_.begin(), servers_.end(), from);
        target_ = it == servers_.end() ? target_ : static_cast<std::size_t>(it - servers_.begin());
        next_server();
      }
      arm_timer(options_.retry_backoff);
    }
    return;
  }
  TrackerResult result;
  try {
    result = decode_tracker_result(m.data, queue_.front().command.op, options_.tracker_limits);
  } catch (const DecodeError&) {
    ++stats_.malformed;
    return;  // a peer that answers garbage is no answer: the timeout moves on
  }
  env_.cancel(timer_);
  timer_ = 0;
  leader_ = from;
  finish_head(result);
}

void TrackerClient::on_link_failure(PeerId peer) {
  // The server we wait on is gone: try the next at once rather than after the timeout.
  if (queue_.empty() || !timer_) return;
  const std::optional<PeerId> current =
      leader_ ? leader_ : servers_.empty() ? std::nullopt : std::optional<PeerId>(servers_[target_]);
  if (current != peer) return;
  next_server();
  send_head();
}

std::vector<std::uint64_t> TrackerClient::lost_since_reboot(std::uint64_t restored_last_seq) const {
  std::vector<std::uint64_t> out;
  for (std::uint64_t seq : acknowledged_)
    if (seq > restored_last_seq) out.push_back(seq);
  return out;
}

}  // namespace swarmlab::core::tracker
