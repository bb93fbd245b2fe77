#pragma once
// What ns-3 3.37's TcpSocketBase keeps protected that the backend needs per connection:
//  - its TcpSocketState, to set the maximum pacing rate of one socket (ns-3 only offers it as a
//    global default, ns3::TcpSocketState::MaxPacingRate, read when a socket is created), as
//    Linux's SO_MAX_PACING_RATE does;
//  - how much of its send buffer it has not sent yet, to refill it before it runs dry;
//  - tearing a connection down at once, without FIN or RST, for a peer that vanished.
// A pointer to a protected member formed through a derived class is legal C++ and reaches the
// member of any TcpSocketBase, so nothing in ns-3 is patched.
#include <ns3/tcp-socket-base.h>
#include <ns3/tcp-socket-state.h>
#include <ns3/tcp-tx-buffer.h>

#include <cstdint>

namespace swarmlab::sim {

class TcpSocketAccess final : public ns3::TcpSocketBase {
 public:
  static ns3::TcpSocketState& state(ns3::TcpSocketBase& socket) { return *(socket.*(&TcpSocketAccess::m_tcb)); }
  static std::uint32_t unsent_bytes(ns3::TcpSocketBase& socket) {
    const ns3::Ptr<ns3::TcpTxBuffer>& tx = socket.*(&TcpSocketAccess::m_txBuffer);
    return tx->SizeFromSequence(state(socket).m_nextTxSequence.Get());
  }
  // Frees the endpoint and cancels every timer: the socket neither sends nor receives again.
  static void abort(ns3::TcpSocketBase& socket) { (socket.*(&TcpSocketAccess::DeallocateEndPoint))(); }
};

}  // namespace swarmlab::sim
