#include "sim/network/ns3/tcp_stream.h"

#include <algorithm>
#include <cmath>

#include "sim/network/ns3/tcp_socket_access.h"

namespace swarmlab::sim {

TcpStream::TcpStream(StreamContext& context, PeerId from, PeerId to, ns3::Ptr<ns3::TcpSocketBase> sender,
                     std::uint32_t segment_bytes)
    : ctx_(context), from_(from), to_(to), sender_(std::move(sender)), read_bytes_(segment_bytes) {
  sender_->SetSendCallback(ns3::MakeCallback(&TcpStream::on_send_space, this));
  sender_->SetConnectCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                              ns3::MakeCallback(&TcpStream::on_connect_failed, this));
  sender_->SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                             ns3::MakeCallback(&TcpStream::on_error, this));
  ns3::Address local;
  sender_->GetSockName(local);
  local_port_ = ns3::InetSocketAddress::ConvertFrom(local).GetPort();
  last_delivery_ = ctx_.clock.now();
  sndbuf_ = ctx_.initial_sndbuf;
}

TcpStream::~TcpStream() {
  if (sender_) detach(*sender_);
  if (receiver_) detach(*receiver_);
}

void TcpStream::detach(ns3::Socket& socket) {
  socket.SetSendCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, std::uint32_t>());
  socket.SetRecvCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
  socket.SetConnectCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                            ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
  socket.SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                           ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
}

void TcpStream::enqueue(std::uint64_t bytes, Network::Done done) {
  queued_ += bytes;
  ++ctx_.outstanding;
  pending_.push_back(Pending{queued_, bytes, std::move(done), ctx_.clock.now()});
  pump();
}

void TcpStream::pump() {
  // The socket takes bytes while its send buffer has room; the send callback asks for more.
  // Writes are few and large: ns-3 merges a segment cut across two writes, and merging turns its
  // virtual payload into real, copied memory, so a write waits for room for a batch, unless what
  // the socket has not sent yet would run out first.
  while (!broken_ && written_ < queued_) {
    const std::uint64_t left = queued_ - written_;
    const std::uint32_t room = sender_->GetTxAvailable();
    const std::uint32_t batch = std::max(8 * read_bytes_, sndbuf_ / 4);
    if (room == 0 || (room < left && room < batch && TcpSocketAccess::unsent_bytes(*sender_) >= batch)) break;
    const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(room, left));
    const int sent = sender_->Send(ns3::Create<ns3::Packet>(chunk), 0);
    if (sent <= 0) break;
    written_ += static_cast<std::uint64_t>(sent);
  }
}

void TcpStream::on_send_space(ns3::Ptr<ns3::Socket>, std::uint32_t) { pump(); }

void TcpStream::attach_receiver(ns3::Ptr<ns3::Socket> receiver) {
  receiver_ = ns3::DynamicCast<ns3::TcpSocketBase>(receiver);
  tune_started_ = ctx_.clock.now();
  receiver_->SetRecvCallback(ns3::MakeCallback(&TcpStream::on_readable, this));
  receiver_->SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                               ns3::MakeCallback(&TcpStream::on_error, this));
  on_readable(receiver_);  // data may have come with the handshake's last ACK
}

void TcpStream::on_readable(ns3::Ptr<ns3::Socket> socket) {
  // At most one segment per read: ns-3 merges what one read returns into one packet, and merging
  // many turns their virtual payload into real, copied memory.
  while (ns3::Ptr<ns3::Packet> p = socket->Recv(read_bytes_, 0)) {
    if (p->GetSize() == 0) break;
    received_ += p->GetSize();
  }
  const Seconds now = ctx_.clock.now();
  if (ctx_.max_sndbuf > 0) autotune(now);
  while (!pending_.empty() && pending_.front().end <= received_) {
    Pending m = std::move(pending_.front());
    pending_.pop_front();
    const Seconds started = std::max(m.enqueued, last_delivery_);
    last_delivery_ = now;
    --ctx_.outstanding;
    ctx_.bytes_delivered += m.bytes;
    ctx_.clock.post([done = std::move(m.done), started, now] { done(TransferOutcome{true, started, now}); });
  }
}

void TcpStream::autotune(Seconds now) {
  // Buffer autotuning, as Linux does it: once per round trip, the sender's buffer (and so what it
  // can have in flight) may grow to twice what was delivered in the last round trip; it never
  // shrinks. Windows so follow each connection's actual share instead of filling every queue on
  // its path up to the buffer ceiling. (The send buffer rather than the receive window: ns-3 3.37's
  // sender crashes when a receive window opens while it recovers losses.)
  if (now - tune_started_ < ctx_.base_rtt(from_, to_)) return;
  const std::uint64_t target = 2 * (received_ - tune_received_);
  tune_started_ = now;
  tune_received_ = received_;
  if (target <= sndbuf_ || sndbuf_ >= ctx_.max_sndbuf) return;
  sndbuf_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(target, ctx_.max_sndbuf));
  sender_->SetAttribute("SndBufSize", ns3::UintegerValue(sndbuf_));
  pump();
}

void TcpStream::set_rate_limit(double bps) {
  if (broken_) return;
  if (!std::isfinite(bps)) {
    sender_->SetPacingStatus(false);
    return;
  }
  // ns-3 paces every segment at min(max rate, ratio x cwnd / RTT); the max is this limit. The
  // current rate starts at the limit and ns-3 lowers it from the next ACK on.
  ns3::TcpSocketState& st = TcpSocketAccess::state(*sender_);
  const ns3::DataRate rate(static_cast<std::uint64_t>(std::max(1.0, std::round(bps))));
  st.m_maxPacingRate = rate;
  st.m_pacingRate = rate;
  sender_->SetPaceInitialWindow(true);
  sender_->SetPacingStatus(true);
}

void TcpStream::fail(Seconds notice_s) {
  if (broken_) return;
  broken_ = true;
  for (ns3::TcpSocketBase* end : {ns3::PeekPointer(sender_), ns3::PeekPointer(receiver_)}) {
    if (!end) continue;
    detach(*end);
    TcpSocketAccess::abort(*end);
  }
  const Seconds at = ctx_.clock.now() + notice_s;
  while (!pending_.empty()) {
    Pending m = std::move(pending_.front());
    pending_.pop_front();
    --ctx_.outstanding;
    const Seconds started = std::max(m.enqueued, last_delivery_);
    ctx_.clock.post_at(at, [done = std::move(m.done), started, at] { done(TransferOutcome{false, started, at}); });
  }
}

void TcpStream::break_by_itself() {
  if (broken_) return;
  fail(0);
  if (ctx_.on_broken) ctx_.on_broken(*this);
}

void TcpStream::on_connect_failed(ns3::Ptr<ns3::Socket>) { break_by_itself(); }
void TcpStream::on_error(ns3::Ptr<ns3::Socket>) { break_by_itself(); }

}  // namespace swarmlab::sim
