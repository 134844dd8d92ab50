// Peer address blobs of the ofi backend, decoded without libfabric (ofi_wire.h).
#include "transport/ofi/ofi_wire.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"

namespace rdmabench::transport::ofi {

PeerAddress decodePeerAddress(const std::vector<uint8_t>& remote, bool msg,
                              const std::string& label) {
  const size_t header = msg ? kMsgAddressHeader : kAddressHeader;
  if (remote.size() < header || getLe(remote.data(), 4) != kAddressMagic ||
      remote[4] != kAddressVersion || remote[5] != (msg ? kTypeMsg : 0) ||
      remote.size() != header + getLe(remote.data() + 6, 2)) {
    if (msg)
      throw ProtocolError(fmt::format(
          "ofi connect (FI_EP_MSG) on {}: malformed peer address ({} B; not from an rdmabench "
          "ofi device with --ep msg of this version)",
          label, remote.size()));
    throw ProtocolError(fmt::format(
        "ofi connect on {}: malformed peer address ({} B; not from an rdmabench ofi device of "
        "this version)",
        label, remote.size()));
  }
  PeerAddress a;
  a.id = getLe(remote.data() + 8, 8);
  a.addrFormat = static_cast<uint32_t>(getLe(remote.data() + 16, 4));
  if (msg) a.token = getLe(remote.data() + 20, 8);
  a.nameBytes = remote.size() - header;
  a.name.assign(std::max(a.nameBytes, kNameBuffer), 0);
  std::copy(remote.begin() + static_cast<std::ptrdiff_t>(header), remote.end(), a.name.begin());
  return a;
}

}  // namespace rdmabench::transport::ofi
