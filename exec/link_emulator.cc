#include "exec/link_emulator.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cmath>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "exec/system_command.h"

namespace swarmlab::exec {
namespace {

std::string bits(double bps) {
  // tc takes integer rates; "bit" is bits per second.
  return std::to_string(static_cast<std::uint64_t>(std::llround(std::max(bps, 8.0)))) + "bit";
}

bool process_alive(long pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

std::string LinkEmulator::unavailable_reason() {
  if (geteuid() != 0) return "emulating links needs root (network namespaces, veths and tc); run as root or without --emulate-links";
  if (find_program("ip").empty()) return "the `ip` program (iproute2) is not installed";
  if (find_program("tc").empty()) return "the `tc` program (iproute2) is not installed";
  if (access("/proc/self/ns/net", R_OK) != 0) return "this kernel has no network namespaces";
  return "";
}

std::size_t LinkEmulator::cleanup_stale() {
  const std::string ip = find_program("ip");
  if (ip.empty() || geteuid() != 0) return 0;
  std::size_t removed = 0;
  const std::regex ns_name("swl([0-9]+)-[0-9]+");
  if (DIR* dir = opendir("/run/netns")) {
    std::vector<std::string> stale;
    while (dirent* e = readdir(dir)) {
      std::cmatch m;
      if (std::regex_match(e->d_name, m, ns_name) && !process_alive(std::stol(m[1].str()))) stale.push_back(e->d_name);
    }
    closedir(dir);
    for (const auto& ns : stale) removed += run_command({ip, "netns", "del", ns}).ok() ? 1 : 0;
  }
  // Bridges and host-side veths: "NN: swl123b: <...>" or "NN: swl123h4@if5: <...>".
  const CommandResult links = run_command({ip, "-o", "link", "show"});
  const std::regex link_name("^[0-9]+: (swl([0-9]+)[bhn][0-9]*)[@:]");
  std::stringstream lines(links.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, link_name) && !process_alive(std::stol(m[2].str())))
      removed += run_command({ip, "link", "del", m[1].str()}).ok() ? 1 : 0;
  }
  return removed;
}

LinkEmulator::LinkEmulator(const std::vector<EmulatedLink>& links, std::string tag)
    : links_(links), tag_(std::move(tag)) {
  if (const std::string why = unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  if (links_.empty() || links_.size() > 60000) throw std::invalid_argument("link emulation: 1 to 60000 peers");
  ip_ = find_program("ip");
  tc_ = find_program("tc");
  bridge_ = tag_ + "b";
  for (std::size_t i = 0; i < links_.size(); ++i) {
    netns_.push_back(tag_ + "-" + std::to_string(i));
    host_veth_.push_back(tag_ + "h" + std::to_string(i));
  }
  if (bridge_.size() > 15 || host_veth_.back().size() > 15)
    throw std::invalid_argument("link emulation: interface names longer than 15 characters (tag " + tag_ + ")");
  try {
    build();
  } catch (...) {
    teardown();
    throw;
  }
}

LinkEmulator::~LinkEmulator() { teardown(); }

std::uint32_t LinkEmulator::address(std::size_t i) const {
  const auto host = static_cast<std::uint32_t>(i + 1);
  return (10u << 24) | (77u << 16) | host;  // 10.77.0.0/16; host part i + 1
}

void LinkEmulator::must(const std::vector<std::string>& argv) {
  commands_.push_back(join_command(argv));
  const CommandResult r = run_command(argv);
  if (!r.ok()) throw std::runtime_error("link emulation: `" + join_command(argv) + "` failed: " + r.output);
}

void LinkEmulator::shape(const std::string& netns, const std::string& dev, double bps, double latency_s,
                         bool match_destination, std::size_t self) {
  // One htb class per remote peer under the link's class: each gets rate / n guaranteed and may
  // borrow up to the whole link, round-robin (htb's DRR among classes that borrow). The link is
  // thereby fair between the connections that share it, as the fluid model assumes (max-min) and
  // as access links with fq_codel - Linux's default qdisc - behave; a single FIFO would instead
  // let some TCP flows run ahead of others for seconds. Unclassified packets (ARP) use 1:2.
  const std::size_t n = links_.size();
  const std::string share = bits(bps / static_cast<double>(n));
  std::vector<std::string> lines;
  lines.push_back("qdisc add dev " + dev + " root handle 1: htb default 2");
  // quantum: equal for every class, so borrowed bandwidth is split evenly; set explicitly
  // because htb's default (rate / r2q) would differ per class and warn above 200000.
  lines.push_back("class add dev " + dev + " parent 1: classid 1:1 htb rate " + bits(bps) + " ceil " + bits(bps) +
                  " quantum 30000");
  lines.push_back("class add dev " + dev + " parent 1:1 classid 1:2 htb rate " + share + " ceil " + bits(bps) +
                  " quantum 30000");
  std::vector<std::string> leaves;
  for (std::size_t k = 0; k < n; ++k) {
    if (k == self) continue;
    char classid[16];
    std::snprintf(classid, sizeof classid, "1:%zx", k + 16);
    const std::uint32_t a = address(k);
    const std::string ip = "10.77." + std::to_string((a >> 8) & 0xFF) + "." + std::to_string(a & 0xFF) + "/32";
    lines.push_back("class add dev " + dev + " parent 1:1 classid " + classid + " htb rate " + share + " ceil " +
                    bits(bps) + " quantum 30000");
    lines.push_back("filter add dev " + dev + " parent 1: protocol ip prio 1 u32 match ip " +
                    (match_destination ? "dst " : "src ") + ip + " flowid " + classid);
    leaves.push_back(classid);
  }
  run_batch(netns, lines);
  // Shallow leaf queues: two 64 KiB GSO packets, or 5 ms of the link's rate when that is more.
  // The fluid model has no queues; deep ones (pfifo's 1000 packets are up to 64 MB with GSO) let
  // TCP park a standing queue in the link, so a stream produced at the link's own rate (averaged
  // parts going back) lags by it, and flows sharing a link drift apart for seconds. Measured with
  // 8 peers streaming all-to-all over 100 Mb/s links: goodput 0.94 with this queue, 0.89 with
  // 20 ms, 0.87 with 100-500 ms (exec/README.md).
  const double queue_bytes = std::max(bps / 8.0 * 0.005, 2.0 * 65536 + 2 * 1514);
  if (latency_s > 0 && latency_emulated_) {
    // netem holds the packets in flight as well: its limit (packets) covers the delay plus the queue.
    const auto packets = static_cast<std::uint64_t>((bps / 8.0 * latency_s + queue_bytes) / 1514) + 64;
    const auto delay_us = std::to_string(static_cast<std::uint64_t>(std::llround(latency_s * 1e6))) + "us";
    std::vector<std::string> netem;
    for (const auto& leaf : leaves)
      netem.push_back("qdisc add dev " + dev + " parent " + leaf + " netem delay " + delay_us + " limit " + std::to_string(packets));
    try {
      run_batch(netns, netem);
      return;
    } catch (const std::runtime_error&) {
      latency_emulated_ = false;  // no sch_netem in this kernel: links without added latency
    }
  }
  std::vector<std::string> fifo;
  for (const auto& leaf : leaves)
    fifo.push_back("qdisc add dev " + dev + " parent " + leaf + " bfifo limit " + std::to_string(static_cast<std::uint64_t>(queue_bytes)));
  run_batch(netns, fifo);
}

void LinkEmulator::run_batch(const std::string& netns, const std::vector<std::string>& lines) {
  // One tc process per device instead of one per command: building 24 peers' links stays fast.
  char path[] = "/tmp/swarmlab-tc-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("link emulation: cannot create a tc batch file");
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  std::vector<std::string> argv{tc_};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  argv.insert(argv.end(), {"-batch", path});
  for (const auto& l : lines) commands_.push_back("tc " + std::string(netns.empty() ? "" : "-n " + netns + " ") + l);
  const CommandResult r = written ? run_command(argv) : CommandResult{};
  unlink(path);
  if (!r.ok()) throw std::runtime_error("link emulation: `" + join_command(argv) + "` failed: " + r.output);
}

void LinkEmulator::build() {
  bool any_latency = false;
  for (const auto& l : links_) any_latency |= l.latency_s > 0;
  latency_emulated_ = true;
  must({ip_, "link", "add", bridge_, "type", "bridge"});
  must({ip_, "link", "set", bridge_, "up"});
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const std::string& ns = netns_[i];
    const std::string inner = tag_ + "n" + std::to_string(i);
    const std::uint32_t a = address(i);
    const std::string cidr = "10.77." + std::to_string((a >> 8) & 0xFF) + "." + std::to_string(a & 0xFF) + "/16";
    must({ip_, "netns", "add", ns});
    must({ip_, "link", "add", host_veth_[i], "type", "veth", "peer", "name", inner});
    must({ip_, "link", "set", inner, "netns", ns});
    must({ip_, "-n", ns, "link", "set", inner, "name", "eth0"});
    must({ip_, "-n", ns, "addr", "add", cidr, "dev", "eth0"});
    must({ip_, "-n", ns, "link", "set", "eth0", "up"});
    must({ip_, "-n", ns, "link", "set", "lo", "up"});
    must({ip_, "link", "set", host_veth_[i], "master", bridge_});
    must({ip_, "link", "set", host_veth_[i], "up"});
    shape(ns, "eth0", links_[i].upload_bps, links_[i].latency_s, /*match_destination=*/true, i);
    shape("", host_veth_[i], links_[i].download_bps, links_[i].latency_s, /*match_destination=*/false, i);
  }
  if (!any_latency) latency_emulated_ = true;  // nothing to add: the links are exactly as asked
}

void LinkEmulator::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // Deleting a namespace destroys its end of the veth, and with it the pair.
  for (const auto& ns : netns_) run_command({ip_, "netns", "del", ns});
  for (const auto& veth : host_veth_) run_command({ip_, "link", "del", veth});  // if its namespace never got it
  run_command({ip_, "link", "del", bridge_});
}

}  // namespace swarmlab::exec
