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
// routed (but by the NAT routers below, between their own two namespaces) and the host's own
// interfaces are never touched.
//
// A peer behind NAT (EmulatedLink::behind_nat, for client-mode peers) really cannot accept
// connections, only dial out: a router namespace sits between it and the bridge.
//   peer "swl<pid>-<i>":    eth0 = local_address(i) (10.78.x.y/15), default route via the router
//   router "swl<pid>-r<i>": lan0 = 10.79.x.y/15 (to the peer), wan0 = address(i)/16 (to the bridge),
//                          ip forwarding on, nftables: MASQUERADE out of wan0 (with `random` for
//                          a symmetric NAT: a new port per connection), and from wan0 only the
//                          packets of its own connections (ct established,related), forwarded or
//                          to the router itself; the rest is dropped silently
// (x.y: the host part of address(i) = 10.77.x.y; one /15 per peer-router pair, in namespaces of
// their own, so the pairs never meet.)
// Its outgoing connections arrive with source address(i); nothing is DNATed, so a connection to
// address(i) reaches the router itself, which drops it (the dialer times out), and the private address
// is not routed on the bridge (and dropped by the router if it were). The link is shaped exactly
// as a public peer's: upload on the peer's own eth0 (by destination, which NAT leaves alone),
// download on the bridge's end (by source: remote peers behind NAT appear as their address(j)
// after masquerade). The router adds no shaping and no latency.
//
// Names carry the launcher's pid ("swl<pid>-<i>" and "swl<pid>-r<i>" namespaces, "swl<pid>b"
// bridge, "swl<pid>h<i>" veths), so concurrent runs never collide and leftovers of a launcher that
// died can be found and removed (cleanup_stale). The destructor tears everything down; so does a
// failure half-way through construction.
#include <cstdint>
#include <string>
#include <vector>

namespace swarmlab::exec {

struct EmulatedLink {
  double upload_bps = 0;
  double download_bps = 0;
  double latency_s = 0;  // one-way, added on each direction of this peer's access link
  bool behind_nat = false;  // behind its own NAT router: can dial out, cannot be reached
  // The router picks a new public port for every connection (a symmetric NAT, which defeats hole
  // punching) instead of keeping the peer's (a cone, through which a simultaneous open works).
  bool symmetric_nat = false;
};

class LinkEmulator {
 public:
  // Why links cannot be emulated here ("" when they can): not root, no `ip` or `tc`, no netns.
  static std::string unavailable_reason();
  // Why peers cannot be put behind NAT here ("" when they can): unavailable_reason(), or no usable
  // `nft` (nftables).
  static std::string nat_unavailable_reason();
  // Removes namespaces, bridges and veths left by launchers that are no longer running. Returns
  // how many objects were removed.
  static std::size_t cleanup_stale();

  // Builds the network. Throws std::runtime_error naming the failing command (after tearing down
  // what was built), or saying why NAT is unavailable when a link asks for it.
  LinkEmulator(const std::vector<EmulatedLink>& links, std::string tag);
  ~LinkEmulator();
  LinkEmulator(const LinkEmulator&) = delete;
  LinkEmulator& operator=(const LinkEmulator&) = delete;

  // Idempotent; runs even when some objects are already gone.
  void teardown();

  std::size_t size() const { return links_.size(); }
  const std::string& netns(std::size_t i) const { return netns_[i]; }
  std::string netns_path(std::size_t i) const { return "/run/netns/" + netns_[i]; }
  // Where other peers reach peer i (IPv4, host byte order): its own address, or behind NAT its
  // router's public address, which its outgoing connections carry as their source.
  std::uint32_t address(std::size_t i) const;
  bool behind_nat(std::size_t i) const { return links_[i].behind_nat; }
  // The address peer i's own interface holds (what its sockets see): address(i), or behind NAT its
  // private address, which no other peer can reach.
  std::uint32_t local_address(std::size_t i) const;
  // The NAT router's namespace of peer i; empty when it is not behind NAT.
  const std::string& router_netns(std::size_t i) const { return router_netns_[i]; }
  bool latency_emulated() const { return latency_emulated_; }
  const std::string& tag() const { return tag_; }
  // The commands that built the network, for the run's log.
  const std::vector<std::string>& commands() const { return commands_; }

 private:
  void build();
  void must(const std::vector<std::string>& argv);
  // Moves the bridge-side veth's peer into `netns` as `dev` with address(i)/16 and plugs it in.
  void attach_to_bridge(std::size_t i, const std::string& netns, const std::string& dev);
  // Builds peer i's NAT router namespace and the peer's private link to it.
  void build_nat(std::size_t i);
  // Shapes egress of `dev` to `bps`, fair between the other peers (classified by destination
  // address on the upload side, by source address on the download side).
  void shape(const std::string& netns, const std::string& dev, double bps, double latency_s, bool match_destination,
             std::size_t self);
  void run_batch(const std::string& netns, const std::vector<std::string>& lines);

  std::vector<EmulatedLink> links_;
  std::string tag_;
  std::string ip_, tc_;
  std::string bridge_;
  std::string nft_;
  std::vector<std::string> netns_, router_netns_, host_veth_;
  bool latency_emulated_ = true;
  bool torn_down_ = false;
  std::vector<std::string> commands_;
};

}  // namespace swarmlab::exec
