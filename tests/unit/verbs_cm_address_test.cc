// rdma_cm connection addresses of the verbs backend (transport/verbs/verbs_cm_address.h).
#ifdef RDMABENCH_HAVE_VERBS
#include "transport/verbs/verbs_cm_address.h"

#include <gtest/gtest.h>

namespace rdmabench::transport::verbs {
namespace {

TEST(VerbsCmAddress, RoundTripAndRefusals) {
  CmAddress a;
  a.port = 40000;
  a.ip = {10, 0, 0, 1};
  a.token = 77;
  CmAddress b = CmAddress::decode(a.encode(), "dev");
  EXPECT_EQ(b.text(), "10.0.0.1:40000");
  EXPECT_EQ(b.token, 77u);
  auto bytes = a.encode();
  bytes[2] = 5;  // family
  EXPECT_THROW(CmAddress::decode(bytes, "dev"), ProtocolError);
  bytes = a.encode();
  bytes.pop_back();
  EXPECT_THROW(CmAddress::decode(bytes, "dev"), ProtocolError);
  bytes = a.encode();
  bytes[1] = 9;  // version
  EXPECT_THROW(CmAddress::decode(bytes, "dev"), ProtocolError);
}

}  // namespace
}  // namespace rdmabench::transport::verbs
#endif
