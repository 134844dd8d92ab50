#pragma once
// SocketConnector: the device's listening TCP socket (listener.h, one per device, shared by its
// connectors) plus a random 64-bit token that tells this connector's connections from the
// others'. connect() picks the role by comparing the two address byte strings
// (framing.h): the side whose bytes compare lexicographically smaller accepts, the other
// connects. The bytes start with a random per-Device id, so all connectors of two devices
// agree on which device accepts. The connecting side never waits for the acceptor (the kernel
// backlog completes its handshake), and an acceptor only waits for a device with a larger id;
// so with one thread per Device, any number of connectors may connect to their peers in any
// order without deadlock (every chain of waits ends at the largest id, which never waits).
// A device opened with DeviceOptions::acceptOnly (a server session) has id 0 and refuses to
// connect (TransportError) instead of connecting to an address its peer chose.
// Connecting two connectors of the SAME device from one thread blocks (the acceptor waits for
// a connect() that the same thread has not yet made): use two threads. Not thread-safe.

#include <memory>
#include <vector>

#include "transport/socket/framing.h"
#include "transport/socket/listener.h"
#include "transport/socket/net_util.h"
#include "transport/transport.h"

namespace rdmabench::transport::socket {

class SocketDevice;

class SocketConnector : public Connector {
 public:
  // Registers with the device's listener (opening it if needed); throws SystemError naming the
  // bind address on failure.
  explicit SocketConnector(SocketDevice& device);
  ~SocketConnector() override;

  // kAddressBytes bytes (see framing.h).
  std::vector<uint8_t> localAddress() const override { return localBytes_; }
  // Accepting side: waits for a connection whose hello carries our token (those for the
  // device's other connectors are kept for them, strangers are closed and counted), then
  // leaves the listener (closed with its last connector). Connecting side: connects (retrying
  // ECONNREFUSED until the deadline) and sends the hello. Throws TransportError for malformed
  // or self addresses and a second call, TimeoutError naming the peer, InterruptedError.
  std::unique_ptr<Endpoint> connect(const std::vector<uint8_t>& remoteAddress,
                                    const Deadline& deadline) override;

 private:
  Fd acceptPeer(const std::string& peer, const Deadline& deadline);
  Fd connectPeer(const ListenAddress& remote, const std::string& peer, const Deadline& deadline);
  void unregister();

  SocketDevice& device_;
  std::shared_ptr<ListenerHub> hub_;
  bool registered_ = false;  // our token is in the device's ListenerHub
  ListenAddress local_;
  std::vector<uint8_t> localBytes_;
  std::string localName_;
  bool used_ = false;
};

}  // namespace rdmabench::transport::socket
