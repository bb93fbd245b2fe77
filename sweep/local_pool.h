#pragma once
// Runs work items in forked child processes, at most `jobs` at a time: the simulator is
// single-threaded and deterministic per run, and a process per run shares nothing with the others
// (ns-3 is a process-wide singleton; GLPK keeps global state), so any backend runs in parallel, and
// a run that crashes takes only its own process down.
//
// SIGINT, SIGTERM and SIGHUP make the parent stop starting work, send SIGTERM to the children
// still running, reap them and return; children die with their parent (PR_SET_PDEATHSIG).
#include <cstddef>
#include <functional>
#include <vector>

namespace swarmlab::sweep {

struct ChildExit {
  bool exited = false;  // returned normally (then `code`), else killed by `signal`
  int code = 0;
  int signal = 0;
};

// Runs `work(item)` in a child for every item of `items` (the child exits with its return value)
// and calls `done(item, exit)` in the parent as each child ends. Returns false when interrupted.
bool run_forked(const std::vector<std::size_t>& items, unsigned jobs, const std::function<int(std::size_t)>& work,
                const std::function<void(std::size_t, const ChildExit&)>& done);

// Whether a child killed by `signal` was stopped from outside (Ctrl-C, kill, OOM) rather than
// crashed by its own fault: such a run is not recorded, so a rerun tries it again.
bool is_interruption(int signal);

}  // namespace swarmlab::sweep
