// fuzz_address: the opaque connection bytes peers exchange in Addresses frames and on the data
// connection: RemoteRegion descriptors, socket connector addresses / connect hellos / message
// headers, ofi address blobs (RDM and FI_EP_MSG), verbs QP and rdma_cm addresses (when those
// backends are built). Every decoder gets the same bytes; the first byte chooses raw bytes or (odd)
// the hex text the Addresses frame carries, decoded by fromHex as the product does.

#include <sys/socket.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "fuzz_util.h"
#include "rendezvous/protocol.h"
#include "transport/socket/framing.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include "transport/ofi/ofi_wire.h"
#endif
#ifdef RDMABENCH_HAVE_VERBS
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_cm_address.h"
#endif

namespace {

using namespace rdmabench;

template <class F>
void guarded(F&& f) {
  try {
    f();
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> bytes;
  if (data[0] & 1) {
    try {
      bytes = rendezvous::fromHex(std::string(fuzz::asText(data + 1, size - 1)), 4096);
    } catch (const Error&) {
      return 0;
    }
  } else {
    bytes.assign(data + 1, data + size);
  }
  guarded([&] {
    transport::RemoteRegion r = transport::RemoteRegion::decode(bytes);
    if (r.encode() != bytes) __builtin_trap();  // decode must invert encode exactly
  });
  guarded([&] {
    namespace sk = transport::socket;
    sk::ListenAddress a = sk::decodeAddress(bytes);
    (void)sk::formatSockaddr(reinterpret_cast<const sockaddr*>(&a.addr));
    if (sk::encodeAddress(a) != bytes) __builtin_trap();
  });
  if (bytes.size() >= transport::socket::kHeaderBytes)
    (void)transport::socket::decodeHeader(bytes.data());
  if (bytes.size() >= transport::socket::kHelloBytes)
    (void)transport::socket::decodeHello(bytes.data());
#ifdef RDMABENCH_HAVE_OFI
  for (bool msg : {false, true})
    guarded([&] {
      namespace of = transport::ofi;
      of::PeerAddress a = of::decodePeerAddress(bytes, msg, "fuzz-domain");
      // What the device hands to the provider must cover any sockaddr it may read.
      if (a.name.size() < of::kNameBuffer || a.nameBytes > a.name.size()) __builtin_trap();
    });
#endif
#ifdef RDMABENCH_HAVE_VERBS
  guarded([&] {
    namespace vb = transport::verbs;
    vb::QpAddress a = vb::QpAddress::decode(bytes, "fuzz-dev");
    (void)vb::describePeer(a);
  });
  guarded([&] {
    namespace vb = transport::verbs;
    vb::CmAddress a = vb::CmAddress::decode(bytes, "fuzz-dev");
    (void)a.text();
    (void)a.sockaddr();
    if (vb::CmAddress::decode(a.encode(), "fuzz-dev").text() != a.text()) __builtin_trap();
  });
#endif
  return 0;
}
