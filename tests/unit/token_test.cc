// Access token: resolution order, constant-time comparison, refusal texts, hello round trip.
#include "common/token.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

// A private directory for the Slurm token files of one test ($RDMABENCH_TOKEN_DIR), removed after.
struct TokenDir {
  std::string path;
  TokenDir() {
    char tmpl[] = "/tmp/rdmabench-token-test.XXXXXX";
    path = ::mkdtemp(tmpl);
    setenv(kTokenDirEnvVar, path.c_str(), 1);
  }
  ~TokenDir() {
    std::filesystem::remove_all(path);
    unsetenv(kTokenDirEnvVar);
  }
};

// Under Slurm the default token is a secret in a file only the user can read (#36): it used to be
// a hash of the job id, cluster name and user id, which any user on the cluster can compute.
TEST(Token, SlurmSecretIsPrivateAndNotDerived) {
  unsetenv(kTokenEnvVar);
  TokenDir dir;
  setenv("SLURM_JOB_ID", "777", 1);
  setenv("SLURM_CLUSTER_NAME", "c/../x", 1);
  const std::string token = slurmJobToken();
  ASSERT_EQ(token.size(), 32u);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  const std::string file = dir.path + "/slurm-c_.._x-777.token";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  EXPECT_EQ(slurmJobToken(), token);  // every rank reads the first one's
  // The same public ids with another user's (or node's) directory: another secret.
  const std::string first = dir.path;
  {
    TokenDir other;
    EXPECT_NE(slurmJobToken(), token);
  }
  setenv(kTokenDirEnvVar, first.c_str(), 1);
  // A file others can read is refused, naming it.
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  try {
    (void)slurmJobToken();
    ADD_FAILURE() << "a file of mode 0644 was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is accessible to other users (mode 0644)"),
              std::string::npos)
        << e.what();
  }
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_CLUSTER_NAME");
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
  TokenDir dir;
  setenv("SLURM_JOB_ID", "4242", 1);
  std::string slurm = resolveToken(std::nullopt, true);
  EXPECT_EQ(slurm.size(), 32u) << slurm;
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
