// Address blobs of the ofi backend (Connector::localAddress) and the RDM side of connect():
// the peer's name goes into the AV once per distinct address.

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "transport/ofi/ofi_device_impl.h"
#include "transport/peer_check.h"

namespace rdmabench::transport::ofi {

namespace {

// The IP of a sockaddr-format endpoint name (FI_SOCKADDR, _IN, _IN6), canonical; "" for formats
// that carry none (shm's strings, IB addresses).
std::string endpointIp(uint32_t format, const void* name) {
  sockaddr_storage ss{};
  std::memcpy(&ss, name, sizeof(sockaddr_in6));  // the name is zero-padded (ofi_wire.h)
  // The family must be the one the format implies: the provider reads the format's layout.
  const bool in4 = format == FI_SOCKADDR_IN || format == FI_SOCKADDR;
  const bool in6 = format == FI_SOCKADDR_IN6 || format == FI_SOCKADDR;
  if (!in4 && !in6) return "";
  char ip[INET6_ADDRSTRLEN] = "";
  if (in4 && ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, ip, sizeof ip);
  else if (in6 && ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, ip, sizeof ip);
  else
    return "?";  // a family the format does not carry: never one of ours
  return canonicalIp(ip);
}

}  // namespace

std::string rdmPeerRefusal(const std::string& controlPeer, uint32_t format, const void* name) {
  const std::string ip = endpointIp(format, name);
  if (ip.empty()) return "";  // no IP in this format (shm, IB): nothing to probe with
  return serverPeerRefusal(controlPeer, ip == "?" ? "(unreadable address)" : ip);
}

std::string OfiDevice::addressString(const void* name) const {
  if (!av_) {
    // FI_EP_MSG has no AV to print with: format the IP formats ourselves.
    char ip[INET6_ADDRSTRLEN] = "";
    if (sel_.info->addr_format == FI_SOCKADDR_IN) {
      sockaddr_in a;
      std::memcpy(&a, name, sizeof(a));
      inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
      return fmt::format("{}:{}", ip, ntohs(a.sin_port));
    }
    if (sel_.info->addr_format == FI_SOCKADDR_IN6) {
      sockaddr_in6 a;
      std::memcpy(&a, name, sizeof(a));
      inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip));
      return fmt::format("[{}]:{}", ip, ntohs(a.sin6_port));
    }
    return fmt::format("(address format {})", sel_.info->addr_format);
  }
  char buf[128];
  size_t len = sizeof(buf);
  const char* s = fi_av_straddr(av_.get(), name, buf, &len);
  return s ? std::string(s) : std::string("(unprintable address)");
}

std::vector<uint8_t> OfiDevice::localAddress(uint32_t conn) const {
  if (sel_.msg) {
    const ConnState& c = *conns_[conn];
    std::vector<uint8_t> out(kMsgAddressHeader + c.listenName.size());
    putLe(out.data(), kAddressMagic, 4);
    out[4] = kAddressVersion;
    out[5] = kTypeMsg;
    putLe(out.data() + 6, c.listenName.size(), 2);
    putLe(out.data() + 8, deviceId_, 8);
    putLe(out.data() + 16, sel_.info->addr_format, 4);
    putLe(out.data() + 20, c.token, 8);
    std::copy(c.listenName.begin(), c.listenName.end(), out.begin() + kMsgAddressHeader);
    return out;
  }
  std::vector<uint8_t> out(kAddressHeader + epName_.size());
  putLe(out.data(), kAddressMagic, 4);
  out[4] = kAddressVersion;
  out[5] = 0;
  putLe(out.data() + 6, epName_.size(), 2);
  putLe(out.data() + 8, conns_[conn]->localTag, 8);
  putLe(out.data() + 16, sel_.info->addr_format, 4);
  std::copy(epName_.begin(), epName_.end(), out.begin() + kAddressHeader);
  return out;
}

void OfiDevice::connect(uint32_t conn, const std::vector<uint8_t>& remote) {
  // The name is zero-padded (ofi_wire.h): the provider reads as much as its format takes.
  const PeerAddress peer = decodePeerAddress(remote, false, label_);
  const uint32_t format = peer.addrFormat;
  if (format != sel_.info->addr_format)
    throw TransportError(fmt::format(
        "ofi connect on {}: peer address format {} differs from ours ({}); both sides must use "
        "the same provider",
        label_, format, sel_.info->addr_format));
  const void* name = peer.name.data();
  // A server session never sends to an address the client names but does not own: rxm would
  // open a connection there (a port probe for the client). Checked before fi_av_insert.
  if (acceptOnly_) {
    const std::string refusal = rdmPeerRefusal(peerHost_, format, name);
    if (!refusal.empty())
      throw TransportError(fmt::format("ofi connect on {}: {}", label_, refusal));
  }
  const std::string key(peer.name.begin(),
                        peer.name.begin() + static_cast<std::ptrdiff_t>(peer.nameBytes));
  ConnState& c = *conns_[conn];
  c.peerName = addressString(name);
  auto it = avByName_.find(key);
  if (it == avByName_.end()) {
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int rc = fi_av_insert(av_.get(), name, 1, &addr, 0, nullptr);
    if (rc != 1)
      throw TransportError(
          fmt::format("fi_av_insert of peer {} on {}: returned {} instead of 1 ({})", c.peerName,
                      label_, rc, rc < 0 ? fiError(rc) : std::string("address rejected")));
    it = avByName_.emplace(key, addr).first;
  }
  c.addr = it->second;
  c.peerTag = peer.id;
  c.connected = true;
}

}  // namespace rdmabench::transport::ofi
