// Access token: resolution order, constant-time comparison, refusal texts, hello round trip.
#include "common/token.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/error.h"
#include "rendezvous/protocol.h"

namespace rdmabench {
namespace {

TEST(Token, Equality) {
  EXPECT_TRUE(tokensEqual("abc", "abc"));
  EXPECT_FALSE(tokensEqual("abc", "abd"));
  EXPECT_FALSE(tokensEqual("abc", "ab"));
  EXPECT_FALSE(tokensEqual("abc", "abcd"));
  EXPECT_FALSE(tokensEqual("abc", ""));
  EXPECT_TRUE(tokensEqual("", ""));
}

TEST(Token, RefusalNamesTheCauseNotTheToken) {
  EXPECT_EQ(tokenRefusal("", "anything"), "");  // no token configured: everyone gets in
  EXPECT_EQ(tokenRefusal("s3cret", "s3cret"), "");
  std::string none = tokenRefusal("s3cret", "");
  EXPECT_NE(none.find("carried none"), std::string::npos) << none;
  std::string wrong = tokenRefusal("s3cret", "guess");
  EXPECT_NE(wrong.find("wrong token"), std::string::npos) << wrong;
  EXPECT_EQ(wrong.find("s3cret"), std::string::npos);
  EXPECT_EQ(wrong.find("guess"), std::string::npos);
}

TEST(Token, ResolutionOrder) {
  unsetenv(kTokenEnvVar);
  unsetenv("SLURM_JOB_ID");
  EXPECT_EQ(resolveToken(std::nullopt, true), "");
  setenv(kTokenEnvVar, "from-env", 1);
  EXPECT_EQ(resolveToken(std::nullopt, false), "from-env");
  EXPECT_EQ(resolveToken(std::string("opt"), false), "opt");
  EXPECT_EQ(resolveToken(std::string(""), false), "");  // explicit "" disables
  unsetenv(kTokenEnvVar);
  setenv("SLURM_JOB_ID", "4242", 1);
  std::string slurm = resolveToken(std::nullopt, true);
  EXPECT_EQ(slurm.rfind("slurm-", 0), 0u) << slurm;
  EXPECT_EQ(slurm, slurmJobToken());  // same on every rank of the job
  EXPECT_EQ(resolveToken(std::nullopt, false), "");
  setenv("SLURM_JOB_ID", "4243", 1);
  EXPECT_NE(slurmJobToken(), slurm);
  unsetenv("SLURM_JOB_ID");
  EXPECT_THROW(resolveToken(std::string(kMaxTokenBytes + 1, 'x'), false), UsageError);
  EXPECT_THROW(resolveToken(std::string("a\nb"), false), UsageError);
}

TEST(Token, HelloCarriesIt) {
  using namespace rendezvous;
  rendezvous::Frame f;
  std::string enc = encodeHello({kProtocolVersion, "1.2.3", "tok\xff"});
  f.payload.assign(enc.begin(), enc.end());
  Hello h = decodeHello(f, "peer");
  EXPECT_EQ(h.token, "tok\xff");
  EXPECT_EQ(h.toolVersion, "1.2.3");
  // A token length pointing past the payload is refused, not read out of bounds.
  f.payload[6] = 200;
  EXPECT_THROW(decodeHello(f, "peer"), ProtocolError);
}

}  // namespace
}  // namespace rdmabench
