#include "exec/link_emulator.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
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

std::string dotted(std::uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xFF) + "." + std::to_string((a >> 8) & 0xFF) + "." +
         std::to_string(a & 0xFF);
}

// `text` in a fresh file under /tmp (for `tc -batch` and `nft -f`); returns its path.
std::string temp_file(const std::string& text) {
  char path[] = "/tmp/swarmlab-net-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("link emulation: cannot create a temporary file in /tmp");
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(path);
    throw std::runtime_error("link emulation: cannot write a temporary file in /tmp");
  }
  return path;
}

// Sets net.ipv4.ip_forward = 1 in the namespace at `netns_path`. /proc/sys/net is the namespace of
// the process that opens it, so a child enters the namespace and writes it there (no dependency
// on sysctl(8); the launcher's own namespace is never changed).
bool enable_forwarding(const std::string& netns_path) {
  const int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    // Child: system calls only.
    if (setns(ns, CLONE_NEWNET) != 0) _exit(2);
    const int f = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
    _exit(f >= 0 && write(f, "1\n", 2) == 2 ? 0 : 3);
  }
  close(ns);
  if (pid < 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The router's rules: everything leaving toward the bridge takes the router's address (and, for
// a symmetric NAT, a random port per connection); from the bridge only packets of those
// connections get in, so the peer behind it stays unreachable even for a host that routes its
// private address to the router. Anything else is dropped silently, as home routers do: a
// connection to the router's address times out. That silence is what lets a hole punch work (a
// peer's first SYN dies at the other router without a reset, and the other's SYN then finds
// this router expecting it).
std::string nat_rules(bool symmetric) {
  return std::string(R"(table ip swarmlab_nat {
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    oifname "wan0" masquerade)") +
         (symmetric ? " random" : "") + R"(
  }
  chain forward {
    type filter hook forward priority 0; policy accept;
    iifname "wan0" ct state established,related accept
    iifname "wan0" drop
  }
  chain input {
    type filter hook input priority 0; policy accept;
    iifname "wan0" ct state established,related accept
    iifname "wan0" drop
  }
}
)";
}

}  // namespace

std::string LinkEmulator::unavailable_reason() {
  if (geteuid() != 0) return "emulating links needs root (network namespaces, veths and tc); run as root or without --emulate-links";
  if (find_program("ip").empty()) return "the `ip` program (iproute2) is not installed";
  if (find_program("tc").empty()) return "the `tc` program (iproute2) is not installed";
  if (access("/proc/self/ns/net", R_OK) != 0) return "this kernel has no network namespaces";
  return "";
}

std::string LinkEmulator::nat_unavailable_reason() {
  if (std::string why = unavailable_reason(); !why.empty()) return why;
  const std::string nft = find_program("nft");
  if (nft.empty()) return "peers behind NAT need the `nft` program (nftables), which is not installed";
  // Reading the ruleset needs nf_tables in the kernel and the right to use it, as the routers will.
  if (const CommandResult r = run_command({nft, "list", "tables"}); !r.ok())
    return "peers behind NAT need nftables, and `nft list tables` failed: " + r.output;
  return "";
}

std::size_t LinkEmulator::cleanup_stale() {
  const std::string ip = find_program("ip");
  if (ip.empty() || geteuid() != 0) return 0;
  std::size_t removed = 0;
  const std::regex ns_name("swl([0-9]+)-r?[0-9]+");  // peers and NAT routers
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
  const bool any_nat = std::any_of(links_.begin(), links_.end(), [](const EmulatedLink& l) { return l.behind_nat; });
  if (any_nat)
    if (const std::string why = nat_unavailable_reason(); !why.empty()) throw std::runtime_error("link emulation: " + why);
  ip_ = find_program("ip");
  tc_ = find_program("tc");
  if (any_nat) nft_ = find_program("nft");
  bridge_ = tag_ + "b";
  for (std::size_t i = 0; i < links_.size(); ++i) {
    netns_.push_back(tag_ + "-" + std::to_string(i));
    router_netns_.push_back(links_[i].behind_nat ? tag_ + "-r" + std::to_string(i) : "");
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

std::uint32_t LinkEmulator::local_address(std::size_t i) const {
  // Behind NAT: 10.78.0.0/15 with the same host part (the router's end is 10.79.x.y), never on the bridge.
  return links_[i].behind_nat ? (address(i) & 0xFFFFu) | (10u << 24) | (78u << 16) : address(i);
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
    const std::string ip = dotted(address(k)) + "/32";  // a NAT'd peer's too: masquerade gives it this source
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
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  const std::string path = temp_file(text);
  std::vector<std::string> argv{tc_};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  argv.insert(argv.end(), {"-batch", path});
  for (const auto& l : lines) commands_.push_back("tc " + std::string(netns.empty() ? "" : "-n " + netns + " ") + l);
  const CommandResult r = run_command(argv);
  unlink(path.c_str());
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
    must({ip_, "netns", "add", ns});
    must({ip_, "-n", ns, "link", "set", "lo", "up"});
    if (links_[i].behind_nat) build_nat(i);
    else attach_to_bridge(i, ns, "eth0");
    // Either way the peer's own eth0 is its upload: behind NAT the router adds no shaping.
    shape(ns, "eth0", links_[i].upload_bps, links_[i].latency_s, /*match_destination=*/true, i);
    shape("", host_veth_[i], links_[i].download_bps, links_[i].latency_s, /*match_destination=*/false, i);
  }
  if (!any_latency) latency_emulated_ = true;  // nothing to add: the links are exactly as asked
}

void LinkEmulator::attach_to_bridge(std::size_t i, const std::string& netns, const std::string& dev) {
  const std::string inner = tag_ + "n" + std::to_string(i);
  must({ip_, "link", "add", host_veth_[i], "type", "veth", "peer", "name", inner});
  must({ip_, "link", "set", inner, "netns", netns});
  must({ip_, "-n", netns, "link", "set", inner, "name", dev});
  must({ip_, "-n", netns, "addr", "add", dotted(address(i)) + "/16", "dev", dev});
  must({ip_, "-n", netns, "link", "set", dev, "up"});
  must({ip_, "link", "set", host_veth_[i], "master", bridge_});
  must({ip_, "link", "set", host_veth_[i], "up"});
}

void LinkEmulator::build_nat(std::size_t i) {
  const std::string& ns = netns_[i];
  const std::string& router = router_netns_[i];
  const std::string peer_ip = dotted(local_address(i));
  const std::string router_ip = dotted(local_address(i) | (1u << 16));  // 10.79.x.y: same /15
  must({ip_, "netns", "add", router});
  must({ip_, "-n", router, "link", "set", "lo", "up"});
  attach_to_bridge(i, router, "wan0");
  // The private link: created inside the router, its other end straight into the peer's namespace.
  must({ip_, "-n", router, "link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", ns});
  must({ip_, "-n", router, "addr", "add", router_ip + "/15", "dev", "lan0"});
  must({ip_, "-n", router, "link", "set", "lan0", "up"});
  must({ip_, "-n", ns, "addr", "add", peer_ip + "/15", "dev", "eth0"});
  must({ip_, "-n", ns, "link", "set", "eth0", "up"});
  must({ip_, "-n", ns, "route", "add", "default", "via", router_ip});
  commands_.push_back("ip netns exec " + router + " sysctl -w net.ipv4.ip_forward=1  # written directly, same effect");
  if (!enable_forwarding("/run/netns/" + router))
    throw std::runtime_error("link emulation: cannot turn on ip forwarding in " + router);
  const std::string rules = temp_file(nat_rules(links_[i].symmetric_nat));
  std::vector<std::string> argv{ip_, "netns", "exec", router, nft_, "-f", rules};
  commands_.push_back(join_command(argv));
  const CommandResult r = run_command(argv);
  unlink(rules.c_str());
  if (!r.ok()) throw std::runtime_error("link emulation: `" + join_command(argv) + "` failed (NAT rules): " + r.output);
}

void LinkEmulator::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // Deleting a namespace destroys its end of the veth, and with it the pair.
  for (const auto& ns : netns_) run_command({ip_, "netns", "del", ns});
  for (const auto& ns : router_netns_)
    if (!ns.empty()) run_command({ip_, "netns", "del", ns});
  for (const auto& veth : host_veth_) run_command({ip_, "link", "del", veth});  // if its namespace never got it
  run_command({ip_, "link", "del", bridge_});
}

}  // namespace swarmlab::exec
