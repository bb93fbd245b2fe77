#pragma once
// One ordered pair's connection: an ns-3 TCP socket on the sender, the socket its listener accepted
// on the receiver, and the FIFO of messages that travel over it as one byte stream. Payloads are
// virtual (ns-3 packets of zero bytes that it never allocates); a message is delivered when the
// receiver has read the stream up to its last byte, so messages on a pair arrive whole and in
// order, as the environment seam promises.
#include <cstdint>
#include <deque>
#include <functional>

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include "sim/network/network.h"
#include "sim/network/ns3/ns3_clock.h"

namespace swarmlab::sim {

class TcpStream;

// What every stream of a network shares.
struct StreamContext {
  explicit StreamContext(Ns3Clock& c) : clock(c) {}
  Ns3Clock& clock;
  std::uint64_t bytes_delivered = 0;
  std::size_t outstanding = 0;  // transfers still owed their done()
  // Send-buffer autotuning: the buffer a sender starts with and its ceiling (0: off).
  std::uint32_t initial_sndbuf = 0;
  std::uint32_t max_sndbuf = 0;
  // Base round-trip time of a pair's path (propagation only).
  std::function<Seconds(PeerId, PeerId)> base_rtt;
  // Called (during an ns-3 event) when a stream's connection broke by itself.
  std::function<void(TcpStream&)> on_broken;
};

class TcpStream {
 public:
  TcpStream(StreamContext& context, PeerId from, PeerId to, ns3::Ptr<ns3::TcpSocketBase> sender,
            std::uint32_t segment_bytes);
  ~TcpStream();
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  PeerId from() const { return from_; }
  PeerId to() const { return to_; }
  bool broken() const { return broken_; }
  std::uint16_t local_port() const { return local_port_; }

  // Appends a message; `done` runs on the engine when it has arrived or the stream broke.
  void enqueue(std::uint64_t bytes, Network::Done done);
  // The receiver's end, accepted by the destination's listener.
  void attach_receiver(ns3::Ptr<ns3::Socket> receiver);
  // Sender-side rate limit in bits/s of payload (kUnlimited: none), as SO_MAX_PACING_RATE.
  void set_rate_limit(double bps);
  // Tears both ends down at once; every message not yet delivered fails `notice_s` from now.
  void fail(Seconds notice_s);

 private:
  struct Pending {
    std::uint64_t end;  // stream offset just past its last byte
    std::uint64_t bytes;
    Network::Done done;
    Seconds enqueued;
  };
  void pump();
  void autotune(Seconds now);
  void on_send_space(ns3::Ptr<ns3::Socket>, std::uint32_t);
  void on_readable(ns3::Ptr<ns3::Socket> socket);
  void on_connect_failed(ns3::Ptr<ns3::Socket>);
  void on_error(ns3::Ptr<ns3::Socket>);
  void break_by_itself();
  static void detach(ns3::Socket& socket);

  StreamContext& ctx_;
  PeerId from_, to_;
  ns3::Ptr<ns3::TcpSocketBase> sender_;
  ns3::Ptr<ns3::TcpSocketBase> receiver_;
  std::uint16_t local_port_ = 0;
  std::uint32_t read_bytes_;    // one full segment: the unit of reads and writes
  std::deque<Pending> pending_;
  std::uint64_t queued_ = 0;    // bytes handed to this stream
  std::uint64_t written_ = 0;   // bytes written into the sender's socket
  std::uint64_t received_ = 0;  // bytes read by the receiver
  Seconds last_delivery_ = 0;
  bool broken_ = false;
  // Send-buffer autotuning.
  std::uint32_t sndbuf_ = 0;
  Seconds tune_started_ = 0;
  std::uint64_t tune_received_ = 0;
};

}  // namespace swarmlab::sim
