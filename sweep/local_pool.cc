#include "sweep/local_pool.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <cstring>

namespace swarmlab::sweep {

namespace {

volatile sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Installs the stop handler (without SA_RESTART, so waitpid returns on a signal) for its life.
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
  }

 private:
  struct sigaction old_[std::size(kStopSignals)];
};

ChildExit decode(int status) {
  ChildExit e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return e;
}

}  // namespace

bool is_interruption(int signal) {
  return signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGKILL || signal == SIGQUIT;
}

bool run_forked(const std::vector<std::size_t>& items, unsigned jobs, const std::function<int(std::size_t)>& work,
                const std::function<void(std::size_t, const ChildExit&)>& done) {
  if (jobs == 0) jobs = 1;
  StopSignals stop_signals;
  const pid_t parent = ::getpid();
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;

  const auto reap = [&](bool block) -> bool {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid <= 0) return false;
    const auto it = running.find(pid);
    if (it == running.end()) return true;  // not one of ours
    const std::size_t item = it->second;
    running.erase(it);
    done(item, decode(status));
    return true;
  };

  while (!g_stop && (next < items.size() || !running.empty())) {
    while (!g_stop && next < items.size() && running.size() < jobs) {
      std::fflush(nullptr);  // the child must not flush the parent's buffered output again
      const pid_t pid = ::fork();
      if (pid < 0) {
        if (!running.empty()) break;  // retry when a child ends
        throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(errno));
      }
      if (pid == 0) {
        for (int s : kStopSignals) ::signal(s, SIG_DFL);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(128 + SIGTERM);
        int code = 1;
        try {
          code = work(items[next]);
        } catch (...) {
          code = 1;
        }
        std::fflush(nullptr);
        ::_exit(code);
      }
      running.emplace(pid, items[next++]);
    }
    if (running.empty()) continue;
    if (!reap(true) && errno != EINTR && errno != 0) break;
  }
  if (g_stop) {
    for (const auto& [pid, item] : running) ::kill(pid, SIGTERM);
    while (!running.empty())
      if (!reap(true) && errno == ECHILD) break;
    return false;
  }
  return true;
}

}  // namespace swarmlab::sweep
