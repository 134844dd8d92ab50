#pragma once
// ListenerHub: the one listening TCP socket of a SocketDevice, shared by all its connectors.
// Each connector registers its random 64-bit token; an accepting connector takes the first
// connection whose hello (framing.h) carries its token. A connection that arrives for another
// registered connector of the device is kept for it; one with an unknown token, a malformed
// hello or no hello within 10 s is closed and counted. The socket is opened by the first
// registration (ephemeral port) and closed when the last token is removed, so a device with
// no connector waiting holds no listener.
//
// Why shared: a listener per connector held one ephemeral port per peer until connected, so
// 1024 local ranks of ~20 peers each needed ~20,000 ports (of 28,232 in Linux's default range)
// and every bind(port 0) searched the whole bind table; ranks failed with EADDRINUSE.
//
// Thread-safety: every call takes the hub's mutex (connectors of one device may connect from
// two threads: see connector.h); accept() does not hold it while it sleeps.

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/socket_util.h"
#include "transport/socket/framing.h"
#include "transport/socket/net_util.h"

namespace rdmabench::transport::socket {

class ListenerHub {
 public:
  // `bind`: the device's bind address (its port is ignored).
  explicit ListenerHub(const SockAddr& bind) : bind_(bind) {}

  // Registers `token`; opens the listener if none is open. Returns its port (host byte order),
  // or 0 when `token` is already registered (pick another). Throws SystemError naming the
  // address when socket/bind/listen fails.
  uint16_t add(uint64_t token);
  // Forgets `token` and any connection kept for it; closes the listener after the last token.
  void remove(uint64_t token);

  // Waits for the connection whose hello carries `token` (registered). Returns it with the
  // hello consumed (bytes after it belong to the data stream), or an empty Fd once `deadline`
  // passed; `rejected`/`lastReject` then tell what was turned away meanwhile. Throws
  // InterruptedError (Ctrl-C) naming "socket connect", SystemError when accept() fails.
  Fd accept(uint64_t token, const Deadline& deadline, int& rejected, std::string& lastReject);

 private:
  struct Pending {  // accepted, hello not complete yet
    Fd fd;
    uint8_t hello[kHelloBytes];
    size_t got = 0;
    int64_t acceptedNs = 0;
  };
  // Accepts what the backlog holds and reads hellos; connections with a complete hello go to
  // kept_. Caller holds mu_.
  void pump(int& rejected, std::string& lastReject);

  std::mutex mu_;
  SockAddr bind_;
  Fd listen_;
  uint16_t port_ = 0;
  std::set<uint64_t> tokens_;
  std::map<uint64_t, Fd> kept_;  // token -> connection with its hello read
  std::vector<Pending> pending_;
};

}  // namespace rdmabench::transport::socket
