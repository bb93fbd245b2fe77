#pragma once
// A tracker replica's reports of its leadership to the bootstrap server (docs/hydra.md §2), so that
// a peer asking the server for a dataset's tracker is sent to the replica that serves it. The
// replica reports when it becomes leader, and again every `refresh` while it stays leader (a report
// may be lost beyond the client's retries, or the server may have restarted empty); it stops when
// it is deposed. Each report carries the Raft term, so that a deposed leader's late report never
// overwrites its successor's (BootstrapDirectory::report_leader).
//
// Plug on_role() into the replica's raft::RaftHooks. It must outlive the replica's node, or be
// destroyed with it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/env.h"
#include "core/raft/node.h"
#include "core/tracker/bootstrap_client.h"

namespace swarmlab::core::tracker {

class LeaderReporter {
 public:
  LeaderReporter(Environment& env, BootstrapClient& client, std::string title, std::uint64_t generation,
                 Seconds refresh = 30);
  ~LeaderReporter();
  LeaderReporter(const LeaderReporter&) = delete;
  LeaderReporter& operator=(const LeaderReporter&) = delete;

  // After every change of the replica's role.
  void on_role(raft::Role role, raft::Term term);

  std::optional<raft::Term> leading() const { return leading_; }
  std::uint64_t reports() const { return reports_; }
  std::uint64_t accepted() const { return accepted_; }

 private:
  void report();

  Environment& env_;
  BootstrapClient& client_;
  std::string title_;
  std::uint64_t generation_;
  Seconds refresh_;
  std::optional<raft::Term> leading_;  // the term this replica leads in
  TimerHandle timer_ = 0;
  std::uint64_t reports_ = 0, accepted_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::tracker
