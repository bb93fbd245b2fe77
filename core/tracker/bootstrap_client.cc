#include "core/tracker/bootstrap_client.h"

#include <stdexcept>
#include <utility>

namespace swarmlab::core::tracker {

BootstrapClient::BootstrapClient(Environment& env, PeerId server, Seconds retry, std::size_t attempts)
    : env_(env), server_(server), retry_(retry), attempts_(attempts == 0 ? 1 : attempts) {}

BootstrapClient::~BootstrapClient() {
  for (auto& [id, p] : pending_) env_.cancel(p.timer);
}

void BootstrapClient::start(BootstrapMessage request, Reply reply) {
  const std::uint64_t id = next_request_id_++;
  request.request_id = id;
  Pending p;
  p.bytes = encode(request);
  p.expect = reply_kind(request.kind);
  p.reply = std::move(reply);
  pending_.emplace(id, std::move(p));
  // From a timer, so that no callback can run inside the public call.
  pending_[id].timer = env_.schedule(0, [this, id] { send(id); });
}

void BootstrapClient::send(std::uint64_t request_id) {
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  p.timer = 0;
  if (p.sends == attempts_) {
    Reply reply = std::move(p.reply);
    pending_.erase(it);
    reply(nullptr);
    return;
  }
  ++p.sends;
  ++requests_sent_;
  env_.send(server_, Message{p.bytes, 0});
  p.timer = env_.schedule(retry_, [this, request_id] { send(request_id); });
}

void BootstrapClient::handle(PeerId from, const Message& message) {
  BootstrapMessage m;
  try {
    m = decode_bootstrap_message(message.bytes);
  } catch (const DecodeError&) {
    ++rejected_;
    return;
  }
  auto it = pending_.find(m.request_id);
  if (from != server_ || it == pending_.end() || it->second.expect != m.kind) {
    ++rejected_;  // a stranger's, a late duplicate, or not the answer to this request
    return;
  }
  env_.cancel(it->second.timer);
  Reply reply = std::move(it->second.reply);
  pending_.erase(it);
  reply(&m);
}

void BootstrapClient::assign_id(std::function<void(std::optional<dht::NodeId>)> done) {
  BootstrapMessage q;
  q.kind = BootstrapKind::AssignId;
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    done(r ? std::optional<dht::NodeId>(r->id) : std::nullopt);
  });
}

void BootstrapClient::register_dataset(std::string title, std::function<void(std::optional<bool>)> done) {
  BootstrapMessage q;
  q.kind = BootstrapKind::RegisterDataset;
  q.title = std::move(title);
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    done(r ? std::optional<bool>(r->accepted) : std::nullopt);
  });
}

void BootstrapClient::report_leader(std::string title, std::uint64_t generation, std::uint64_t term,
                                    std::function<void(std::optional<bool>)> done) {
  BootstrapMessage q;
  q.kind = BootstrapKind::ReportLeader;
  q.title = std::move(title);
  q.generation = generation;
  q.term = term;
  q.leader = env_.self();
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    done(r ? std::optional<bool>(r->accepted) : std::nullopt);
  });
}

void BootstrapClient::find_tracker(std::string title,
                                   std::function<void(std::optional<std::optional<TrackerLocation>>)> done) {
  BootstrapMessage q;
  q.kind = BootstrapKind::FindTracker;
  q.title = std::move(title);
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    if (!r) return done(std::nullopt);
    std::optional<TrackerLocation> where;
    if (r->accepted) where = TrackerLocation{r->generation, r->leader};
    done(where);
  });
}

void BootstrapClient::list_datasets(std::function<void(std::optional<std::vector<std::string>>)> done) {
  BootstrapMessage q;
  q.kind = BootstrapKind::ListDatasets;
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    done(r ? std::optional<std::vector<std::string>>(r->titles) : std::nullopt);
  });
}

void BootstrapClient::find_peers(std::size_t n, std::function<void(std::optional<std::vector<PeerId>>)> done) {
  if (n == 0 || n > BootstrapLimits{}.max_peers) throw std::invalid_argument("bootstrap client: find 1 to 256 peers");
  BootstrapMessage q;
  q.kind = BootstrapKind::FindPeers;
  q.count = n;
  start(std::move(q), [done = std::move(done)](const BootstrapMessage* r) {
    done(r ? std::optional<std::vector<PeerId>>(r->peers) : std::nullopt);
  });
}

}  // namespace swarmlab::core::tracker
