#include "exec/child_processes.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "exec/socket_address.h"

namespace swarmlab::exec {

std::vector<std::uint16_t> reserve_loopback_ports(std::size_t n) {
  std::vector<int> fds;
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in sa = SocketAddress::loopback(0).to_sockaddr();
    if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
      for (int f : fds) close(f);
      if (fd >= 0) close(fd);
      throw std::runtime_error(std::string("cannot reserve a loopback port: ") + std::strerror(errno));
    }
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    fds.push_back(fd);
    ports.push_back(ntohs(bound.sin_port));
  }
  for (int f : fds) close(f);
  return ports;
}

std::string exact_decimal(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string self_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe): " + ec.message());
  return p.string();
}

pid_t spawn(const SpawnPlan& plan) {
  // Everything the child touches is prepared before fork(): after it, only system calls.
  std::vector<char*> argv;
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid > 0) return pid;
  // Child.
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
  if (getppid() != parent) _exit(125);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int out = open(plan.out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int err = open(plan.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) _exit(126);
  dup2(out, 1);
  dup2(err, 2);
  if (!plan.netns_path.empty()) {
    const int ns = open(plan.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
      static const char msg[] = "swarmlab launch: cannot enter the peer's network namespace\n";
      [[maybe_unused]] const ssize_t w = write(2, msg, sizeof msg - 1);
      _exit(126);
    }
  }
  execv(plan.executable.c_str(), argv.data());
  static const char msg[] = "swarmlab launch: cannot execute the peer program\n";
  [[maybe_unused]] const ssize_t w = write(2, msg, sizeof msg - 1);
  _exit(127);
}


}  // namespace swarmlab::exec
