#pragma once
// Emulated access links for a local swarm (`swarmlab launch --emulate-links`): every peer gets its
// own network namespace, joined to one bridge by a veth pair, and its access link is shaped with
// tc on that pair:
//   upload   = egress of the namespace's end ("eth0"):  htb at upload_bps
//   download = egress of the bridge's end:               htb at download_bps
// so traffic from i to j crosses i's upload and then j's download, like the simulator's flow
// model. Each link is fair between the peers it carries traffic to or from (one htb class per
// remote peer, borrowing round-robin), as the fluid model's max-min sharing assumes. One-way latency is added with a netem child qdisc on both ends when the kernel has netem;
// without it the links have no added latency and latency_emulated() says so (callers must then
// model zero access latency). Addresses are 10.77.0.0/16, inside the namespaces only: nothing is
// routed and the host's own interfaces are never touched.
//
// Names carry the launcher's pid ("swl<pid>-<i>" namespaces, "swl<pid>b" bridge, "swl<pid>h<i>"
// veths), so concurrent runs never collide and leftovers of a launcher that died can be found and
// removed (cleanup_stale). The destructor tears everything down; so does a failure half-way
// through construction.
#include <cstdint>
#include <string>
#include <vector>

namespace swarmlab::exec {

struct EmulatedLink {
  double upload_bps = 0;
  double download_bps = 0;
  double latency_s = 0;  // one-way, added on each direction of this peer's access link
};

class LinkEmulator {
 public:
  // Why links cannot be emulated here ("" when they can): not root, no `ip` or `tc`, no netns.
  static std::string unavailable_reason();
  // Removes namespaces, bridges and veths left by launchers that are no longer running. Returns
  // how many objects were removed.
  static std::size_t cleanup_stale();

  // Builds the network. Throws std::runtime_error naming the failing command (after tearing down
  // what was built).
  LinkEmulator(const std::vector<EmulatedLink>& links, std::string tag);
  ~LinkEmulator();
  LinkEmulator(const LinkEmulator&) = delete;
  LinkEmulator& operator=(const LinkEmulator&) = delete;

  // Idempotent; runs even when some objects are already gone.
  void teardown();

  std::size_t size() const { return links_.size(); }
  const std::string& netns(std::size_t i) const { return netns_[i]; }
  std::string netns_path(std::size_t i) const { return "/run/netns/" + netns_[i]; }
  std::uint32_t address(std::size_t i) const;  // IPv4, host byte order
  bool latency_emulated() const { return latency_emulated_; }
  const std::string& tag() const { return tag_; }
  // The commands that built the network, for the run's log.
  const std::vector<std::string>& commands() const { return commands_; }

 private:
  void build();
  void must(const std::vector<std::string>& argv);
  // Shapes egress of `dev` to `bps`, fair between the other peers (classified by destination
  // address on the upload side, by source address on the download side).
  void shape(const std::string& netns, const std::string& dev, double bps, double latency_s, bool match_destination,
             std::size_t self);
  void run_batch(const std::string& netns, const std::vector<std::string>& lines);

  std::vector<EmulatedLink> links_;
  std::string tag_;
  std::string ip_, tc_;
  std::string bridge_;
  std::vector<std::string> netns_, host_veth_;
  bool latency_emulated_ = true;
  bool torn_down_ = false;
  std::vector<std::string> commands_;
};

}  // namespace swarmlab::exec
