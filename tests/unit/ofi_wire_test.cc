// ofi address blobs decoded without libfabric (transport/ofi/ofi_wire.h).
#ifdef RDMABENCH_HAVE_OFI
#include "transport/ofi/ofi_wire.h"

#include <gtest/gtest.h>

#include "common/bytes.h"
#include "common/error.h"

namespace rdmabench::transport::ofi {
namespace {

std::vector<uint8_t> blob(bool msg, size_t nameBytes) {
  const size_t header = msg ? kMsgAddressHeader : kAddressHeader;
  std::vector<uint8_t> b(header + nameBytes, 0xab);
  putLe(b.data(), kAddressMagic, 4);
  b[4] = kAddressVersion;
  b[5] = msg ? kTypeMsg : 0;
  putLe(b.data() + 6, nameBytes, 2);
  putLe(b.data() + 8, 0x1122334455667788ULL, 8);
  putLe(b.data() + 16, 2, 4);
  if (msg) putLe(b.data() + 20, 42, 8);
  return b;
}

TEST(OfiWire, DecodesBothLayouts) {
  PeerAddress rdm = decodePeerAddress(blob(false, 16), false, "d");
  EXPECT_EQ(rdm.id, 0x1122334455667788ULL);
  EXPECT_EQ(rdm.addrFormat, 2u);
  EXPECT_EQ(rdm.nameBytes, 16u);
  PeerAddress m = decodePeerAddress(blob(true, 16), true, "d");
  EXPECT_EQ(m.token, 42u);
  EXPECT_EQ(m.name[0], 0xab);
  EXPECT_THROW(decodePeerAddress(blob(true, 16), false, "d"), ProtocolError);
  EXPECT_THROW(decodePeerAddress(blob(false, 16), true, "d"), ProtocolError);
  auto b = blob(false, 16);
  b.pop_back();  // length field says 16
  EXPECT_THROW(decodePeerAddress(b, false, "d"), ProtocolError);
  EXPECT_THROW(decodePeerAddress({}, false, "d"), ProtocolError);
}

// A peer's name shorter than the sockaddr its format implies (here: none at all) used to be read
// past the end of the received bytes by the provider and our own formatting (heap over-read).
TEST(OfiWire, ShortNameIsZeroPadded) {
  PeerAddress a = decodePeerAddress(blob(false, 0), false, "d");
  EXPECT_EQ(a.nameBytes, 0u);
  ASSERT_GE(a.name.size(), kNameBuffer);
  for (uint8_t c : a.name)
    EXPECT_EQ(c, 0);
  PeerAddress m = decodePeerAddress(blob(true, 3), true, "d");
  EXPECT_EQ(m.nameBytes, 3u);
  ASSERT_GE(m.name.size(), kNameBuffer);
  EXPECT_EQ(m.name[2], 0xab);
  EXPECT_EQ(m.name[3], 0);
}

}  // namespace
}  // namespace rdmabench::transport::ofi
#endif
