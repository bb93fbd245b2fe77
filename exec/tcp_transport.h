#pragma once
// Messages between live peers over TCP: one connection per pair of peers, framed messages
// (exec/frame_reader.h), non-blocking I/O on the peer's event loop.
//
// Who connects: for every pair exactly one side dials, so two peers never race to open two
// connections. A client-mode peer (no address: it accepts nothing) dials everyone; between two
// peers that both accept, the one with the larger id dials. The dialing side keeps its connections
// up (it redials after a failure), so a peer that restarts with the same identity is reconnected
// without anyone having to send first. Two client-mode peers
// cannot reach each other at all - sends between them fail at once - unless both can be punched
// to (Options::punch): then both dial, for a simultaneous open. The accepting side, when it
// has something to send and no connection, queues it and waits up to accept_wait for the dialer -
// unless that dialer's connection broke and it has not dialed again: then it is down (or cut off),
// and a send to it is refused at once and reported as a link failure, as the seam promises for a
// send to a peer that is down (core/env.h). Holding it instead would hand a message meant for the
// dead process to its restarted successor, and keep a round waiting on a member that is gone.
//
// Handshake (exec/handshake.h): the dialer's first frame names itself, the peer it expects and the
// run; the acceptor checks all three and that this peer is one that dials it, then answers Ack.
// Messages are pipelined behind the Hello. Anything else - random bytes, a length prefix above
// the handshake limit, a socket that connects and stays silent past handshake_timeout, more than
// max_unidentified connections at once, or more than max_unidentified_per_address of them from one
// source address (so that one host holding silent sockets cannot lock the others out) - is closed
// without touching any peer's state. A malformed
// frame from an identified peer (length above max_message_bytes) breaks that peer's connection,
// which is reported as a link failure like any other break.
//
// Writes: every message is queued with its 4-byte header and written with sendmsg() from the
// message's own buffer (header and body as separate iovecs, many messages per call), so a 64 MB
// message is never copied in user space. Each connection gets a bounded share of the loop per
// turn, so concurrent transfers on different connections interleave.
//
// Link failures are reported (deferred to the loop, never from inside send()) when an identified
// connection that carried messages (either way) breaks, when a dial fails or times out while
// messages were queued, or when the accepting side times out waiting for a dialer with messages
// queued; once per connection. A connection nothing was sent on breaks silently, as in the
// simulator only peers that exchanged messages hear of a crash (core/env.h). A restarted peer
// dialing in replaces its old connection; the old one is reported as failed if it carried messages.
//
// Discovery (Options::discover): the table may list only some peers (the bootstrap peers); the
// others are unknown until their address is learned - from a dialer's Hello, or from the directory
// frames peers exchange (exec/address_directory.h). An unknown peer is treated like a client-mode
// one (it must dial, or its address arrive) and messages for it wait up to accept_wait; once its
// address is learned, the side that dials it does so at once.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/message.h"
#include "exec/event_loop.h"
#include "exec/frame_reader.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {

class TcpTransport {
 public:
  struct Options {
    core::PeerId self = 0;
    // Every peer of the collaboration by id: where it accepts connections, or nullopt for a
    // client-mode peer. addresses[self] is where this peer listens (unless it is client-mode).
    std::vector<std::optional<SocketAddress>> addresses;
    // Where to bind instead of addresses[self] (e.g. 0.0.0.0:port behind an advertised address).
    std::optional<SocketAddress> bind;
    // An already bound and listening socket to use instead of binding addresses[self] (tests,
    // ephemeral ports); the transport takes ownership.
    int listen_fd = -1;
    std::uint64_t network = 0;         // run identity checked in the handshake
    double connect_timeout_s = 5;      // a dial (connect + Ack)
    // How long the accepting side holds messages for a peer that dials it and is not connected. A
    // dialer that is alive but busy (a process starting up) must not cost its messages.
    double accept_wait_s = 30;
    double handshake_timeout_s = 5;    // an accepted socket must identify itself by then
    double redial_interval_s = 0.5;    // between attempts to re-establish a connection this peer dials
    std::uint64_t max_message_bytes = core::kMaxMessageBytes;
    std::size_t max_unidentified = 64;
    std::size_t max_unidentified_per_address = 16;
    // TCP congestion control for every connection (TCP_CONGESTION, e.g. "cubic", "bbr"); empty:
    // the system's default. Paced flows behave differently under each (exec/README.md).
    std::string congestion_control;
    // Learn the addresses of peers missing from `addresses` (see Discovery above).
    bool discover = false;
    // Hole punching (docs/trust.md §4): per peer, where a client-mode peer behind a NAT that keeps
    // its ports (a cone) can be reached by a simultaneous open - its NAT's public address and the
    // port it punches from; empty: nobody punches. Two client-mode peers that both have one
    // connect: both dial from their punch port to the other's at once, so that each NAT has seen
    // an outgoing packet of the connection when the other's arrives. The larger id then sends the
    // Hello and the smaller answers it, as an acceptor would.
    std::vector<std::optional<SocketAddress>> punch;
    // Diagnostics: why identified connections closed (optional).
    std::function<void(const std::string&)> log;
  };

  struct Stats {
    std::uint64_t bytes_sent = 0, bytes_received = 0;  // framing included
    std::uint64_t messages_sent = 0, messages_received = 0;
    std::uint64_t connections_accepted = 0, connections_dialed = 0;
    std::uint64_t rejected_connections = 0;  // bad handshake, silent past the timeout, too many
    std::uint64_t broken_frames = 0;         // identified peers that sent an oversized frame
    std::uint64_t link_failures = 0;         // reported to the owner
    std::uint64_t addresses_learned = 0;     // discovery: from Hellos and directory frames
    std::uint64_t bad_directory_frames = 0;  // malformed, dropped
    std::uint64_t punched_connections = 0;   // opened by a hole punch (simultaneous open)
  };

  using MessageHandler = std::function<void(core::PeerId from, core::Message message)>;
  using FailureHandler = std::function<void(core::PeerId peer)>;

  TcpTransport(EventLoop& loop, Options options, MessageHandler on_message, FailureHandler on_failure);
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // Starts listening (unless client-mode) and dialing. Throws std::runtime_error when the listen
  // address cannot be bound.
  void start();
  // The port this peer listens on (after start()); 0 in client mode.
  std::uint16_t port() const { return port_; }

  // Queues `message` for `to`. Only real bytes travel: virtual_bytes must be 0.
  void send(core::PeerId to, core::Message message);
  // Paces this peer's connection to `to` (SO_MAX_PACING_RATE, bytes/s; 0 = unlimited), now and
  // on every later connection to it. Throws std::out_of_range for itself or an unknown peer.
  void set_pacing(core::PeerId to, double bytes_per_s);

  bool dials(core::PeerId peer) const;
  bool connected(core::PeerId peer) const;
  // Where `peer` listens, as far as this transport knows (nullopt: client-mode, or not learned).
  std::optional<SocketAddress> address_of(core::PeerId peer) const;
  // Bytes queued and not yet handed to the kernel, over all peers.
  std::uint64_t queued_bytes() const;
  // Those, and the bytes in the kernel's send queues that the receivers have not acknowledged yet
  // (SIOCOUTQ): a process that leaves must wait for these, or closing a socket that still holds
  // unread input resets the connection and the receiver loses them.
  std::uint64_t unacknowledged_bytes() const;
  const Stats& stats() const { return stats_; }
  std::size_t peers() const { return links_.size(); }

 private:
  struct OutFrame {
    std::array<std::uint8_t, core::kFrameHeaderBytes> header;
    std::vector<std::uint8_t> bytes;
    std::size_t sent = 0;  // of header + bytes
    std::size_t size() const { return header.size() + bytes.size(); }
  };
  enum class State { Connecting, AwaitAck, AwaitHello, Open, Closed };
  struct Connection {
    explicit Connection(std::uint64_t limit) : reader(limit) {}
    int fd = -1;
    EventLoop::WatchId watch = 0;
    State state = State::Closed;
    bool dialed = false;
    bool answers_hello = false;  // a punched connection's smaller id: it waits for the Hello
    std::uint32_t source_address = 0;  // accepted: the dialer's IPv4 address (network order)
    std::optional<core::PeerId> peer;
    FrameReader reader;
    std::deque<OutFrame> out;
    std::uint64_t out_bytes = 0;
    std::uint64_t app_frames = 0;    // messages (not handshakes) queued on it, ever
    std::uint64_t app_received = 0;  // messages received on it, ever
    bool want_write = false;
    EventLoop::TimerId timer = 0;
  };
  using ConnectionPtr = std::shared_ptr<Connection>;
  struct Link {
    ConnectionPtr conn;
    std::deque<OutFrame> waiting;  // accepting side: messages waiting for the dialer
    std::uint64_t waiting_bytes = 0;
    EventLoop::TimerId wait_timer = 0;
    EventLoop::TimerId redial_timer = 0;
    double pacing = 0;
    // Accepting side: the dialer's connection broke and it has not dialed again (sends refused).
    bool dialer_down = false;
    bool refusal_reported = false;  // one failure report per turn of the loop, however many sends
  };

  static OutFrame make_frame(std::vector<std::uint8_t> bytes);
  // Both client-mode and both with a punch address: they connect by a simultaneous open.
  bool punched(core::PeerId peer) const;
  void listen();
  void on_accept();
  void dial(core::PeerId peer);
  void schedule_redial(core::PeerId peer);
  // Discovery: records `address` for `peer` (replacing a different one only when `firsthand`: from
  // its own Hello), dials it if this side dials, and tells every open connection.
  void learn_address(core::PeerId peer, const SocketAddress& address, bool firsthand);
  void send_directory(const ConnectionPtr& c);
  void on_directory(std::span<const std::uint8_t> frame);
  void on_io(const ConnectionPtr& c, std::uint32_t events);
  void on_connected(const ConnectionPtr& c);
  void read_some(const ConnectionPtr& c);
  void handle_frame(const ConnectionPtr& c, std::vector<std::uint8_t> frame);
  void on_hello(const ConnectionPtr& c, std::vector<std::uint8_t> frame);
  void enqueue(const ConnectionPtr& c, OutFrame frame, bool app);
  void flush(const ConnectionPtr& c);
  void update_interest(const ConnectionPtr& c);
  void apply_pacing(const ConnectionPtr& c);
  // Closes `c`; reports a link failure for its peer when `report` and it is that peer's current
  // connection.
  void close_connection(const ConnectionPtr& c, bool report, const char* why);
  void report_failure(core::PeerId peer);
  void give_up_waiting(core::PeerId peer);

  EventLoop& loop_;
  Options options_;
  MessageHandler on_message_;
  FailureHandler on_failure_;
  int listen_fd_ = -1;
  EventLoop::WatchId listen_watch_ = 0;
  std::uint16_t port_ = 0;
  bool started_ = false;
  std::vector<Link> links_;
  std::vector<ConnectionPtr> unidentified_;  // accepted, waiting for Hello
  Stats stats_;
  // Deferred callbacks hold this token weakly so none runs after the transport is gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::exec
