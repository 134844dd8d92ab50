// engine/hints: the path-MTU hint of a verbs retry-exceeded error.
#include <gtest/gtest.h>

#include "engine/hints.h"

namespace rdmabench::engine {
namespace {

constexpr const char* kRetry =
    "write completion on rxe0 QPN 0x11 (peer 10.0.0.2): transport retry counter exceeded "
    "(status 12, vendor_err 0x0)";

TEST(PathMtuHint, SmallSizesPassedLargerFailsWithRetryExceeded) {
  // 9000 B Ethernet (path MTU 4096) behind a 1500 B link: 1 KiB passes, 2 KiB fails.
  EXPECT_EQ(pathMtuHint(1024, 2048, 4096, kRetry),
            "; sizes up to 1024 B passed and 2048 B failed: frames above 1024 B may be dropped "
            "on the path (a switch or link with an MTU below the QP's path MTU of 4096 B); try "
            "--mtu 1024");
  // The suggestion is an IB MTU not above the largest passing size, at least 256.
  EXPECT_NE(pathMtuHint(100, 8192, 4096, kRetry).find("try --mtu 256"), std::string::npos);
  EXPECT_NE(pathMtuHint(3000, 8192, 4096, kRetry).find("try --mtu 2048"), std::string::npos);
  EXPECT_NE(pathMtuHint(1500, 2048, 2048, kRetry).find("try --mtu 1024"), std::string::npos);
}

TEST(PathMtuHint, NoHintWhereTheMtuCannotBeTheCause) {
  EXPECT_EQ(pathMtuHint(0, 2048, 4096, kRetry), "");      // nothing but 0 B passed
  EXPECT_EQ(pathMtuHint(4096, 8192, 4096, kRetry), "");   // full-MTU frames went through
  EXPECT_EQ(pathMtuHint(8192, 65536, 4096, kRetry), "");  // likewise
  EXPECT_EQ(pathMtuHint(2048, 2048, 4096, kRetry), "");   // the same size passed before
  EXPECT_EQ(pathMtuHint(1024, 2048, 4096, "remote access error"), "");
}

}  // namespace
}  // namespace rdmabench::engine
