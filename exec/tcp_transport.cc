#include "exec/tcp_transport.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/wire.h"
#include "exec/address_directory.h"
#include "exec/handshake.h"

namespace swarmlab::exec {
namespace {

// Per connection and turn of the loop: bounds how long one busy connection holds the loop.
constexpr std::size_t kWriteBudget = 4 << 20;
constexpr std::size_t kReadBudget = 4 << 20;
constexpr int kMaxIov = 64;

void set_options(int fd, const std::string& congestion_control) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!congestion_control.empty())
    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion_control.data(), static_cast<socklen_t>(congestion_control.size()));
}

}  // namespace

TcpTransport::TcpTransport(EventLoop& loop, Options options, MessageHandler on_message, FailureHandler on_failure)
    : loop_(loop), options_(std::move(options)), on_message_(std::move(on_message)), on_failure_(std::move(on_failure)) {
  if (options_.self >= options_.addresses.size())
    throw std::invalid_argument("transport: peer " + std::to_string(options_.self) + " is not in the address table");
  links_.resize(options_.addresses.size());
}

TcpTransport::~TcpTransport() {
  *alive_ = false;
  for (auto& link : links_) {
    loop_.cancel(link.wait_timer);
    loop_.cancel(link.redial_timer);
    if (link.conn) close_connection(link.conn, false, "shutdown");
  }
  for (auto& c : std::vector<ConnectionPtr>(unidentified_)) close_connection(c, false, "shutdown");
  if (listen_fd_ >= 0) {
    loop_.unwatch(listen_watch_);
    close(listen_fd_);
  }
}

bool TcpTransport::punched(core::PeerId peer) const {
  const auto& a = options_.addresses;
  const auto& p = options_.punch;
  return peer < p.size() && options_.self < p.size() && peer != options_.self && p[peer] && p[options_.self] &&
         peer < a.size() && !a[peer] && !a[options_.self];
}

bool TcpTransport::dials(core::PeerId peer) const {
  if (punched(peer)) return true;  // both sides do
  const auto& a = options_.addresses;
  if (peer >= a.size() || peer == options_.self || !a[peer]) return false;  // it accepts nothing
  return !a[options_.self] || options_.self > peer;
}

std::optional<SocketAddress> TcpTransport::address_of(core::PeerId peer) const {
  if (peer >= options_.addresses.size()) return std::nullopt;
  return options_.addresses[peer];
}

void TcpTransport::learn_address(core::PeerId peer, const SocketAddress& address, bool firsthand) {
  if (peer >= options_.addresses.size() || peer == options_.self || address.port == 0) return;
  auto& known = options_.addresses[peer];
  if (known == address || (known && !firsthand)) return;
  known = address;
  ++stats_.addresses_learned;
  const DirectoryEntry entry{peer, address};
  const std::vector<std::uint8_t> frame = encode_directory(std::span(&entry, 1));
  for (auto& link : links_)
    if (link.conn && link.conn->state == State::Open && link.conn->peer != peer) enqueue(link.conn, make_frame(frame), false);
  if (dials(peer) && !links_[peer].conn) dial(peer);
}

void TcpTransport::send_directory(const ConnectionPtr& c) {
  std::vector<DirectoryEntry> entries;
  for (core::PeerId p = 0; p < options_.addresses.size(); ++p)
    if (options_.addresses[p] && p != *c->peer) entries.push_back({p, *options_.addresses[p]});
  if (!entries.empty()) enqueue(c, make_frame(encode_directory(entries)), false);
}

void TcpTransport::on_directory(std::span<const std::uint8_t> frame) {
  std::vector<DirectoryEntry> entries;
  try {
    entries = decode_directory(frame);
  } catch (const core::DecodeError&) {
    ++stats_.bad_directory_frames;
    return;
  }
  for (const DirectoryEntry& e : entries) learn_address(e.peer, e.address, false);
}

bool TcpTransport::connected(core::PeerId peer) const {
  return peer < links_.size() && links_[peer].conn && links_[peer].conn->state == State::Open;
}

std::uint64_t TcpTransport::queued_bytes() const {
  std::uint64_t total = 0;
  for (const auto& link : links_) {
    total += link.waiting_bytes;
    if (link.conn) total += link.conn->out_bytes;
  }
  return total;
}

std::uint64_t TcpTransport::unacknowledged_bytes() const {
  std::uint64_t total = queued_bytes();
  for (const auto& link : links_) {
    if (!link.conn || link.conn->fd < 0) continue;
    int unsent = 0;
    if (ioctl(link.conn->fd, SIOCOUTQ, &unsent) == 0 && unsent > 0) total += static_cast<std::uint64_t>(unsent);
  }
  return total;
}

TcpTransport::OutFrame TcpTransport::make_frame(std::vector<std::uint8_t> bytes) {
  OutFrame f;
  f.header = frame_header(static_cast<std::uint32_t>(bytes.size()));
  f.bytes = std::move(bytes);
  return f;
}

void TcpTransport::start() {
  if (started_) return;
  started_ = true;
  if (options_.addresses[options_.self] || options_.listen_fd >= 0 || options_.bind) listen();
  for (core::PeerId p = 0; p < links_.size(); ++p)
    if (dials(p)) dial(p);
}

void TcpTransport::listen() {
  if (options_.listen_fd >= 0) {
    listen_fd_ = options_.listen_fd;
    options_.listen_fd = -1;
    fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  } else {
    const SocketAddress& addr = options_.bind ? *options_.bind : *options_.addresses[options_.self];
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error(std::string("transport: socket: ") + std::strerror(errno));
    const int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in sa = addr.to_sockaddr();
    if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(listen_fd_, 256) != 0) {
      const std::string why = std::strerror(errno);
      close(listen_fd_);
      listen_fd_ = -1;
      throw std::runtime_error("transport: cannot listen on " + addr.to_string() + ": " + why);
    }
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.sin_port);
  if (!options_.congestion_control.empty()) {
    // Fail early and clearly on a name this kernel does not have (accepted sockets inherit it).
    const std::string& cc = options_.congestion_control;
    if (setsockopt(listen_fd_, IPPROTO_TCP, TCP_CONGESTION, cc.data(), static_cast<socklen_t>(cc.size())) != 0)
      throw std::runtime_error("transport: congestion control \"" + cc + "\" is not available: " + std::strerror(errno));
  }
  listen_watch_ = loop_.watch(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

void TcpTransport::on_accept() {
  for (;;) {
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that died in the backlog
    const std::uint32_t source = from.sin_addr.s_addr;
    const auto from_source = static_cast<std::size_t>(std::count_if(
        unidentified_.begin(), unidentified_.end(), [&](const ConnectionPtr& u) { return u->source_address == source; }));
    if (unidentified_.size() >= options_.max_unidentified || from_source >= options_.max_unidentified_per_address) {
      ++stats_.rejected_connections;
      close(fd);
      continue;
    }
    ++stats_.connections_accepted;
    set_options(fd, options_.congestion_control);
    auto c = std::make_shared<Connection>(kMaxHandshakeBytes);
    c->fd = fd;
    c->source_address = source;
    c->state = State::AwaitHello;
    c->watch = loop_.watch(fd, EPOLLIN, [this, w = std::weak_ptr<Connection>(c)](std::uint32_t ev) {
      if (auto conn = w.lock()) on_io(conn, ev);
    });
    c->timer = loop_.schedule(options_.handshake_timeout_s, [this, w = std::weak_ptr<Connection>(c), alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) return;
      if (auto conn = w.lock()) {
        conn->timer = 0;
        if (conn->state == State::AwaitHello) {
          ++stats_.rejected_connections;  // connected and stayed silent (half-open)
          close_connection(conn, false, "silent past the handshake timeout");
        }
      }
    });
    unidentified_.push_back(std::move(c));
  }
}

void TcpTransport::dial(core::PeerId peer) {
  Link& link = links_[peer];
  loop_.cancel(link.redial_timer);
  link.redial_timer = 0;
  if (link.conn) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    schedule_redial(peer);
    return;
  }
  set_options(fd, options_.congestion_control);
  ++stats_.connections_dialed;
  auto c = std::make_shared<Connection>(kMaxHandshakeBytes);
  c->fd = fd;
  c->dialed = true;
  c->peer = peer;
  c->state = State::Connecting;
  link.conn = c;
  apply_pacing(c);
  const bool punch = punched(peer);
  if (punch) {
    // From the port this peer's NAT keeps for it, like every punch to another peer.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    const sockaddr_in local = SocketAddress{0, options_.punch[options_.self]->port}.to_sockaddr();
    if (bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      link.conn.reset();
      ::close(fd);
      schedule_redial(peer);
      return;
    }
    c->answers_hello = options_.self < peer;
  }
  Handshake hello;
  hello.kind = HandshakeKind::Hello;
  hello.network = options_.network;
  hello.from = options_.self;
  hello.to = peer;
  hello.listen = options_.addresses[options_.self];
  // The side that answers the Hello sends nothing before it; its messages wait for it.
  if (!c->answers_hello) enqueue(c, make_frame(encode_handshake(hello)), false);
  while (!c->answers_hello && !link.waiting.empty()) {
    enqueue(c, std::move(link.waiting.front()), true);
    link.waiting.pop_front();
  }
  link.waiting_bytes = 0;
  c->watch = loop_.watch(fd, EPOLLOUT, [this, w = std::weak_ptr<Connection>(c)](std::uint32_t ev) {
    if (auto conn = w.lock()) on_io(conn, ev);
  });
  c->want_write = true;
  c->timer = loop_.schedule(options_.connect_timeout_s, [this, w = std::weak_ptr<Connection>(c), alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    if (auto conn = w.lock()) {
      conn->timer = 0;
      if (conn->state == State::Connecting || conn->state == State::AwaitAck || (conn->state == State::AwaitHello && conn->answers_hello))
        close_connection(conn, true, "connect timeout");
    }
  });
  const sockaddr_in sa = (punch ? *options_.punch[peer] : *options_.addresses[peer]).to_sockaddr();
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    // Refused at once: fail from the loop, not from inside send().
    loop_.schedule(0, [this, w = std::weak_ptr<Connection>(c), alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) return;
      if (auto conn = w.lock())
        if (conn->state != State::Closed) close_connection(conn, true, "connect refused");
    });
  }
}

void TcpTransport::schedule_redial(core::PeerId peer) {
  Link& link = links_[peer];
  if (link.redial_timer || link.conn || !dials(peer)) return;
  link.redial_timer = loop_.schedule(options_.redial_interval_s, [this, peer, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    links_[peer].redial_timer = 0;
    dial(peer);
  });
}

void TcpTransport::send(core::PeerId to, core::Message message) {
  if (message.virtual_bytes != 0)
    throw std::invalid_argument("live transport: a message with " + std::to_string(message.virtual_bytes) +
                                " virtual payload bytes; live runs carry real bytes only");
  if (to >= links_.size() || to == options_.self)
    throw std::out_of_range("live transport: cannot send to peer " + std::to_string(to));
  if (message.bytes.size() > options_.max_message_bytes)
    throw std::length_error("live transport: message of " + std::to_string(message.bytes.size()) +
                            " bytes exceeds the limit of " + std::to_string(options_.max_message_bytes));
  Link& link = links_[to];
  OutFrame frame = make_frame(std::move(message.bytes));
  if (link.conn && link.conn->state != State::Closed) {
    if (link.conn->answers_hello && link.conn->state != State::Open) {
      link.waiting_bytes += frame.size();
      link.waiting.push_back(std::move(frame));  // sent after the Ack (on_hello)
      return;
    }
    enqueue(link.conn, std::move(frame), true);
    return;
  }
  if (dials(to)) {
    link.waiting.push_back(std::move(frame));  // picked up by dial()
    dial(to);
    return;
  }
  const bool unreachable = !options_.discover && !options_.addresses[to] && !options_.addresses[options_.self];
  if (unreachable || link.dialer_down) {
    // Both client-mode (no connection can ever exist), or its dialer is down: refused.
    if (link.refusal_reported) return;
    link.refusal_reported = true;
    loop_.schedule(0, [this, to, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) return;
      links_[to].refusal_reported = false;
      report_failure(to);
    });
    return;
  }
  link.waiting_bytes += frame.size();
  link.waiting.push_back(std::move(frame));
  if (!link.wait_timer)
    link.wait_timer = loop_.schedule(options_.accept_wait_s, [this, to, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) return;
      links_[to].wait_timer = 0;
      give_up_waiting(to);
    });
}

void TcpTransport::give_up_waiting(core::PeerId peer) {
  Link& link = links_[peer];
  if (link.waiting.empty()) return;
  if (options_.log)
    options_.log("no connection from peer " + std::to_string(peer) + " within the accept wait: " +
                 std::to_string(link.waiting.size()) + " queued messages dropped");
  link.waiting.clear();
  link.waiting_bytes = 0;
  report_failure(peer);
}

void TcpTransport::set_pacing(core::PeerId to, double bytes_per_s) {
  if (to >= links_.size() || to == options_.self) throw std::out_of_range("live transport: cannot pace peer " + std::to_string(to));
  links_[to].pacing = bytes_per_s > 0 ? bytes_per_s : 0;
  if (links_[to].conn) apply_pacing(links_[to].conn);
}

void TcpTransport::apply_pacing(const ConnectionPtr& c) {
  if (!c->peer || c->fd < 0) return;
  const double rate = links_[*c->peer].pacing;
  // 64-bit form (Linux accepts u32 or u64); ~0 removes the limit. Without the fq qdisc TCP paces
  // internally, so this works on loopback, veths and real NICs alike.
  const std::uint64_t value = rate > 0 ? static_cast<std::uint64_t>(rate) : ~0ull;
  setsockopt(c->fd, SOL_SOCKET, SO_MAX_PACING_RATE, &value, sizeof value);
}

void TcpTransport::enqueue(const ConnectionPtr& c, OutFrame frame, bool app) {
  const bool was_empty = c->out.empty();
  c->out_bytes += frame.size();
  if (app) ++c->app_frames;
  c->out.push_back(std::move(frame));
  if (was_empty && c->state == State::Open) flush(c);  // write now: the common, low-latency path
  else update_interest(c);
}

void TcpTransport::update_interest(const ConnectionPtr& c) {
  if (c->state == State::Closed) return;
  const bool want = c->state == State::Connecting || (!c->out.empty() && c->state != State::AwaitHello);
  if (want == c->want_write) return;
  c->want_write = want;
  std::uint32_t events = want ? std::uint32_t{EPOLLOUT} : 0u;
  if (c->state != State::Connecting) events |= EPOLLIN;
  loop_.modify(c->watch, events);
}

void TcpTransport::on_io(const ConnectionPtr& c, std::uint32_t events) {
  if (c->state == State::Closed) return;
  if (c->state == State::Connecting) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      close_connection(c, true, "connect failed");
      return;
    }
    on_connected(c);
    if (c->state == State::Closed) return;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
    read_some(c);
    if (c->state == State::Closed) return;
  }
  if ((events & EPOLLOUT) && !c->out.empty()) flush(c);
}

void TcpTransport::on_connected(const ConnectionPtr& c) {
  if (punched(*c->peer)) ++stats_.punched_connections;
  if (c->answers_hello) {
    c->state = State::AwaitHello;
    loop_.modify(c->watch, EPOLLIN);
    return;
  }
  c->state = State::AwaitAck;
  c->want_write = !c->out.empty();
  loop_.modify(c->watch, EPOLLIN | (c->want_write ? std::uint32_t{EPOLLOUT} : 0u));
  flush(c);  // the Hello and any pipelined messages
}

void TcpTransport::flush(const ConnectionPtr& c) {
  std::size_t budget = kWriteBudget;
  while (!c->out.empty() && budget > 0) {
    iovec iov[kMaxIov];
    int n = 0;
    std::size_t planned = 0;
    for (auto it = c->out.begin(); it != c->out.end() && n + 2 <= kMaxIov && planned < budget; ++it) {
      std::size_t skip = it->sent;
      if (skip < it->header.size()) {
        iov[n++] = {it->header.data() + skip, it->header.size() - skip};
        planned += it->header.size() - skip;
        skip = 0;
      } else {
        skip -= it->header.size();
      }
      if (it->bytes.size() > skip) {
        iov[n++] = {it->bytes.data() + skip, it->bytes.size() - skip};
        planned += it->bytes.size() - skip;
      }
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t w = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      close_connection(c, true, "send failed");
      return;
    }
    auto written = static_cast<std::size_t>(w);
    stats_.bytes_sent += written;
    budget -= std::min(budget, written);
    c->out_bytes -= written;
    while (written > 0) {
      OutFrame& f = c->out.front();
      const std::size_t left = f.size() - f.sent;
      if (written < left) {
        f.sent += written;
        written = 0;
      } else {
        written -= left;
        c->out.pop_front();
        ++stats_.messages_sent;
      }
    }
    if (static_cast<std::size_t>(w) < planned) break;  // the socket buffer is full
  }
  update_interest(c);
}

void TcpTransport::read_some(const ConnectionPtr& c) {
  std::size_t budget = kReadBudget;
  while (budget > 0 && c->state != State::Closed) {
    const std::span<std::uint8_t> buf = c->reader.buffer();
    const ssize_t r = recv(c->fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      close_connection(c, c->state != State::AwaitHello || c->answers_hello, "recv failed");
      return;
    }
    if (r == 0 && !buf.empty()) {  // end of stream: the peer closed or died
      if (c->state == State::AwaitHello) ++stats_.rejected_connections;
      close_connection(c, c->state != State::AwaitHello || c->answers_hello, "end of stream");
      return;
    }
    stats_.bytes_received += static_cast<std::size_t>(r);
    budget -= std::min(budget, static_cast<std::size_t>(r));
    const FrameReader::Status st = c->reader.commit(static_cast<std::size_t>(r));
    if (st == FrameReader::Status::TooLarge) {
      if (c->state == State::Open) ++stats_.broken_frames;
      else ++stats_.rejected_connections;
      close_connection(c, c->state != State::AwaitHello || c->answers_hello, "frame over the size limit");
      return;
    }
    if (st == FrameReader::Status::FrameReady) handle_frame(c, c->reader.take());
  }
}

void TcpTransport::handle_frame(const ConnectionPtr& c, std::vector<std::uint8_t> frame) {
  switch (c->state) {
    case State::AwaitHello:
      on_hello(c, std::move(frame));
      return;
    case State::AwaitAck: {
      Handshake ack;
      try {
        ack = decode_handshake(frame);
      } catch (const core::DecodeError&) {
        close_connection(c, true, "bad handshake answer");
        return;
      }
      if (ack.kind != HandshakeKind::Ack || ack.network != options_.network || ack.from != *c->peer ||
          ack.to != options_.self) {
        close_connection(c, true, "handshake answer from someone else");  // someone else answers at that address
        return;
      }
      c->state = State::Open;
      c->reader.set_limit(options_.max_message_bytes);
      loop_.cancel(c->timer);
      c->timer = 0;
      if (options_.discover) send_directory(c);
      return;
    }
    case State::Open: {
      // With discovery on, a frame starting with the byte no core service uses is a directory.
      if (options_.discover && !frame.empty() && frame[0] == kDirectoryFrame) {
        on_directory(frame);
        return;
      }
      ++stats_.messages_received;
      ++c->app_received;
      const core::PeerId from = *c->peer;
      core::Message m;
      m.bytes = std::move(frame);
      on_message_(from, std::move(m));  // may close c; read_some checks the state
      return;
    }
    default:
      return;
  }
}

void TcpTransport::on_hello(const ConnectionPtr& c, std::vector<std::uint8_t> frame) {
  Handshake hello;
  bool ok = true;
  try {
    hello = decode_handshake(frame);
  } catch (const core::DecodeError&) {
    ok = false;
  }
  ok = ok && hello.kind == HandshakeKind::Hello && hello.network == options_.network && hello.to == options_.self &&
       hello.from < links_.size() && hello.from != options_.self;
  // Its own word on where it listens, checked against the dialing rule like a listed address.
  if (ok && options_.discover && hello.listen) learn_address(hello.from, *hello.listen, true);
  // A punched connection's Hello comes from the peer it was dialed to; an accepted one's from a
  // peer that dials this one.
  ok = ok && (c->answers_hello ? c->peer == hello.from : !dials(hello.from));
  if (!ok) {
    ++stats_.rejected_connections;
    close_connection(c, false, "bad hello");
    return;
  }
  unidentified_.erase(std::remove(unidentified_.begin(), unidentified_.end(), c), unidentified_.end());
  loop_.cancel(c->timer);
  c->timer = 0;
  const core::PeerId peer = hello.from;
  Link& link = links_[peer];
  // A new Hello from a peer we are connected to: it restarted (or saw the old connection break).
  if (link.conn && link.conn != c) close_connection(link.conn, true, "replaced by a new connection from the same peer");
  c->peer = peer;
  c->state = State::Open;
  c->reader.set_limit(options_.max_message_bytes);
  link.conn = c;
  link.dialer_down = false;
  apply_pacing(c);
  Handshake ack;
  ack.kind = HandshakeKind::Ack;
  ack.network = options_.network;
  ack.from = options_.self;
  ack.to = peer;
  c->out.push_back(make_frame(encode_handshake(ack)));
  c->out_bytes += c->out.back().size();
  loop_.cancel(link.wait_timer);
  link.wait_timer = 0;
  if (options_.discover) send_directory(c);
  while (!link.waiting.empty()) {
    c->out_bytes += link.waiting.front().size();
    ++c->app_frames;
    c->out.push_back(std::move(link.waiting.front()));
    link.waiting.pop_front();
  }
  link.waiting_bytes = 0;
  flush(c);
}

void TcpTransport::close_connection(const ConnectionPtr& c, bool report, const char* why) {
  if (c->state == State::Closed) return;
  const int error = errno;
  // Worth a line: a connection that carried messages (not quiet redials, not shutdown).
  if (options_.log && c->peer && (c->state == State::Open || c->app_frames > 0) && std::strcmp(why, "shutdown") != 0)
    options_.log("connection " + std::string(c->dialed ? "to" : "from") + " peer " + std::to_string(*c->peer) +
                 " closed: " + why +
                 (std::strcmp(why, "recv failed") == 0 || std::strcmp(why, "send failed") == 0
                      ? std::string(" (") + std::strerror(error) + ")"
                      : std::string()));
  c->state = State::Closed;
  loop_.cancel(c->timer);
  c->timer = 0;
  loop_.unwatch(c->watch);
  close(c->fd);
  c->fd = -1;
  // Only a connection that carried messages matters to anyone (a Hello queued on a redial does not).
  // A punched connection's answering side holds its messages on the link until the Hello.
  const bool held = c->answers_hello && c->peer && !links_[*c->peer].waiting.empty();
  const bool carried = c->app_frames > 0 || c->app_received > 0 || held;
  c->out.clear();
  c->out_bytes = 0;
  unidentified_.erase(std::remove(unidentified_.begin(), unidentified_.end(), c), unidentified_.end());
  if (!c->peer) return;
  const core::PeerId peer = *c->peer;
  Link& link = links_[peer];
  if (link.conn != c) return;
  if (!c->dialed && std::strcmp(why, "shutdown") != 0) link.dialer_down = true;
  if (held && report) link.waiting.clear(), link.waiting_bytes = 0;  // lost with the connection, as a dialer's queue is
  link.conn.reset();  // `c` may be this very pointer: not used below
  // A connection that never carried a message fails silently: nothing was lost, nobody is told.
  if (report && carried) {
    loop_.schedule(0, [this, peer, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) report_failure(peer);
    });
  }
  if (*alive_) schedule_redial(peer);
}

void TcpTransport::report_failure(core::PeerId peer) {
  ++stats_.link_failures;
  if (on_failure_) on_failure_(peer);
}

}  // namespace swarmlab::exec
