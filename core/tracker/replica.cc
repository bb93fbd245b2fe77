#include "core/tracker/replica.h"

#include <algorithm>
#include <iterator>

#include "core/service_ids.h"
#include "core/tracker/reboot.h"

namespace swarmlab::core::tracker {

TrackerReplica::TrackerReplica(Environment& env, raft::RaftConfig config, raft::MemoryStorage storage,
                               std::vector<PeerId> candidates, raft::RaftHooks hooks, TrackerLimits limits)
    : env_(env), config_(std::move(config)), storage_(std::move(storage)), candidates_(std::move(candidates)),
      hooks_(std::move(hooks)), limits_(limits) {
  restart();
}

void TrackerReplica::crash() {
  node_.reset();  // first: the node refers to the machine
  machine_.reset();
}

void TrackerReplica::restart() {
  if (node_) return;
  machine_ = std::make_unique<TrackerStateMachine>(limits_);
  raft::RaftHooks hooks = hooks_;
  // The state machine authorizes by who asked (state_machine.h).
  hooks.stamp_client_command = [](PeerId from, raft::Bytes command) { return stamp_tracker_command(from, command); };
  node_ = std::make_unique<raft::RaftNode>(env_, config_, storage_, *machine_, hooks);
  node_->set_candidates(candidates_);
}

TrackerReplica& TrackerHost::host(raft::RaftConfig config, raft::MemoryStorage storage, std::vector<PeerId> candidates,
                                  raft::RaftHooks hooks, TrackerLimits limits) {
  const std::uint64_t group = config.group;
  auto replica = std::make_unique<TrackerReplica>(env_, std::move(config), std::move(storage), std::move(candidates),
                                                  std::move(hooks), limits);
  auto& slot = replicas_[group];
  slot = std::move(replica);
  return *slot;
}

TrackerReplica* TrackerHost::replica(std::uint64_t group) {
  auto it = replicas_.find(group);
  return it == replicas_.end() ? nullptr : it->second.get();
}

std::vector<std::uint64_t> TrackerHost::groups() const {
  std::vector<std::uint64_t> out;
  for (const auto& [group, r] : replicas_) out.push_back(group);
  return out;
}

std::optional<RaftHeader> peek_raft_header(std::span<const std::uint8_t> bytes) {
  try {
    Reader r(bytes);
    if (r.u8() != static_cast<std::uint8_t>(ServiceId::Raft)) return std::nullopt;
    const std::uint8_t kind = r.u8();
    if (kind < 1 || kind > 8) return std::nullopt;
    return RaftHeader{static_cast<raft::MessageKind>(kind), r.varint()};
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

void TrackerHost::serve_reboots(TrackerGroupOptions options, HooksFor hooks, TrackerLimits limits) {
  reboot_options_ = std::move(options);
  reboot_hooks_ = std::move(hooks);
  reboot_limits_ = limits;
}

void TrackerHost::on_tracker_message(PeerId from, const Message& message) {
  try {
    if (peek_reboot_kind(message.bytes) == RebootKind::Reply) {
      if (!rebooter_) {
        ++dropped_;
        return;
      }
      return rebooter_->handle(from, message);
    }
    if (!reboot_options_) {
      ++dropped_;
      return;
    }
    RebootLimits limits;
    limits.max_title_bytes = reboot_limits_.max_title_bytes;
    const RebootRequest request = decode_reboot_request(message.bytes, limits);
    RebootReply reply{request.request_id, request.generation, on_reboot(request)};
    env_.send(from, Message{encode(reply), 0});
  } catch (const DecodeError&) {
    ++dropped_;
  }
}

RebootStatus TrackerHost::on_reboot(const RebootRequest& q) {
  TrackerGroupOptions o = *reboot_options_;
  o.generation = q.generation;
  raft::RaftConfig cfg = tracker_raft_config(q.title, o);
  if (replica(cfg.group)) return RebootStatus::Hosting;  // a repeated request
  auto latest = generation_.find(q.title);
  if (latest != generation_.end() && latest->second >= q.generation) return RebootStatus::Stale;
  if (std::find(q.candidates.begin(), q.candidates.end(), env_.self()) == q.candidates.end())
    return RebootStatus::NotCandidate;
  raft::MemoryStorage storage;
  const raft::Configuration members = raft::Configuration::of(q.members);
  if (members.contains(env_.self())) {
    try {
      storage = reboot_storage(q.state, members, reboot_limits_);
    } catch (const DecodeError&) {
      return RebootStatus::BadState;
    }
  }
  // The dataset's earlier generations are lost or superseded: stop serving them.
  const std::uint64_t first = tracker_group_id(dataset_key(q.title), 0);
  for (auto it = replicas_.begin(); it != replicas_.end();)
    it = it->first - first < q.generation ? replicas_.erase(it) : std::next(it);
  generation_[q.title] = q.generation;
  host(std::move(cfg), std::move(storage), q.candidates, reboot_hooks_ ? reboot_hooks_(q.generation) : raft::RaftHooks{},
       reboot_limits_);
  ++reboots_hosted_;
  return RebootStatus::Hosting;
}

void TrackerHost::handle(PeerId from, const Message& message) {
  if (peek_service(message.bytes) == ServiceId::Tracker) return on_tracker_message(from, message);
  const auto header = peek_raft_header(message.bytes);
  if (!header) {
    ++dropped_;
    return;
  }
  if (header->kind == raft::MessageKind::ClientReply) {
    auto it = clients_.find(header->group);
    if (it == clients_.end()) {
      ++dropped_;
      return;
    }
    it->second->handle(from, message);
    return;
  }
  TrackerReplica* r = replica(header->group);
  if (!r) {
    ++dropped_;
    return;
  }
  r->receive(from, message.bytes);
}

void TrackerHost::on_link_failure(PeerId peer) {
  // Raft relies on its own timeouts; clients do too, but hear of it to move on sooner.
  for (const auto& [group, client] : clients_) client->on_link_failure(peer);
}

}  // namespace swarmlab::core::tracker
