#pragma once
// A peer's side of a bootstrap server (bootstrap_server.h, docs/hydra.md §2): each call sends one
// request and reports the server's reply through its callback, sending the request again every
// `retry` until a reply comes or `attempts` sends went unanswered (then the callback gets nullopt).
// Requests are independent and may be in flight together. Replies that do not decode, or that
// match no request in flight, are counted and dropped.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/tracker/bootstrap_messages.h"

namespace swarmlab::core::tracker {

struct TrackerLocation {
  std::uint64_t generation = 0;
  std::optional<PeerId> leader;  // last reported leader of that generation
};

class BootstrapClient final : public Service {
 public:
  BootstrapClient(Environment& env, PeerId server, Seconds retry = 0.5, std::size_t attempts = 8);
  ~BootstrapClient() override;
  BootstrapClient(const BootstrapClient&) = delete;
  BootstrapClient& operator=(const BootstrapClient&) = delete;

  // Callbacks run later, never inside these calls; nullopt when the server never answered.
  void assign_id(std::function<void(std::optional<dht::NodeId>)> done);
  void register_dataset(std::string title, std::function<void(std::optional<bool> accepted)> done);
  // This peer leads the tracker group of `generation` in Raft term `term`.
  void report_leader(std::string title, std::uint64_t generation, std::uint64_t term,
                     std::function<void(std::optional<bool> accepted)> done);
  // The inner optional is empty when the dataset is not listed.
  void find_tracker(std::string title, std::function<void(std::optional<std::optional<TrackerLocation>>)> done);
  void list_datasets(std::function<void(std::optional<std::vector<std::string>>)> done);
  // Up to n (1..256) peers whose ids are closest to this peer's assigned id, closest first.
  void find_peers(std::size_t n, std::function<void(std::optional<std::vector<PeerId>>)> done);

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId) override {}  // the next retry covers it

  std::uint64_t requests_sent() const { return requests_sent_; }
  std::uint64_t rejected() const { return rejected_; }

 private:
  using Reply = std::function<void(const BootstrapMessage*)>;  // nullptr: gave up
  struct Pending {
    std::vector<std::uint8_t> bytes;
    BootstrapKind expect;
    std::size_t sends = 0;
    TimerHandle timer = 0;
    Reply reply;
  };
  void start(BootstrapMessage request, Reply reply);
  void send(std::uint64_t request_id);

  Environment& env_;
  PeerId server_;
  Seconds retry_;
  std::size_t attempts_;
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_request_id_ = 1;
  std::uint64_t requests_sent_ = 0, rejected_ = 0;
};

}  // namespace swarmlab::core::tracker
