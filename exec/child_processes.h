#pragma once
// Child processes of a live launch (`swarmlab launch`, exec/launcher.h and exec/dmoe/dmoe_launch.h):
// free loopback ports, this executable's path, spawning a peer with its output redirected (and,
// optionally, inside a network namespace), and the signal mask and bookkeeping the supervising
// loop needs.
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace swarmlab::exec {

// Ports the kernel hands out as free right now, all distinct (held open together while asked).
std::vector<std::uint16_t> reserve_loopback_ports(std::size_t n);
// A number in decimal with 17 significant digits, so that it reads back exactly: child processes'
// arguments, CSV cells, and the times and limits the launchers report.
std::string exact_decimal(double v);
// This executable's path (/proc/self/exe).
std::string self_executable();

// Blocks the signals the supervisor waits for, and restores the old mask when done.
class SignalScope {
 public:
  SignalScope() {
    sigemptyset(&set_);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SignalScope() {
    // Drop a SIGCHLD left pending by our own children, so a caller that does not expect one
    // never sees it; interrupts were consumed by the supervisor.
    timespec zero{};
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    while (sigtimedwait(&chld, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  // Waits up to `seconds` for one of those signals; true when it was an interrupt (SIGINT,
  // SIGTERM, SIGHUP), false for a child's exit or the time running out.
  bool wait_interrupted(double seconds) const {
    timespec wait{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<double>(static_cast<time_t>(seconds))) * 1e9)};
    siginfo_t info{};
    const int sig = sigtimedwait(&set_, &info, &wait);
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
  }

 private:
  sigset_t set_, old_;
};

struct Child {
  pid_t pid = -1;
  int incarnation = 0;
  bool running = false;
  int exit_code = -1;
  std::optional<double> restart_at;
  std::optional<double> stopped_at;  // it stopped itself (a silent departure)
  bool killing_stopped = false;
};

// Kills and reaps every child still running, whatever path leaves launch().
class Children {
 public:
  explicit Children(std::size_t n) : children_(n) {}
  ~Children() { kill_all(); }
  Child& operator[](std::size_t i) { return children_[i]; }
  std::size_t size() const { return children_.size(); }
  void kill_all() {
    for (auto& c : children_)
      if (c.running && c.pid > 0) kill(c.pid, SIGKILL);
    for (auto& c : children_)
      if (c.running && c.pid > 0) {
        int status = 0;
        while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
        c.running = false;
        c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
  }

 private:
  std::vector<Child> children_;
};

struct SpawnPlan {
  std::string executable;
  std::vector<std::string> argv;
  std::string netns_path;  // empty: this namespace
  std::string out_path, log_path;
};

// Forks and executes `plan` (stdout to out_path, stderr to log_path, both appended); the child
// dies with the launcher. Returns the child's pid.
pid_t spawn(const SpawnPlan& plan);

}  // namespace swarmlab::exec
