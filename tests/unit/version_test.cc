// The version in run headers (common/version.h, report formats): release version from the
// project, git describe of the build next to it, JSON run.git_describe null when unknown.
#include "common/version.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "report/report.h"

namespace rdmabench {
namespace {

report::RunInfo latencyRun() {
  report::RunInfo info;
  info.test = report::Test::kLat;
  info.transport = "socket";
  info.op = "send";
  return info;
}

std::string header(std::string_view format, const report::RunInfo& info) {
  std::ostringstream out;
  auto r = report::makeReporter(format, out);
  r->begin(info);
  r->end();
  return out.str();
}

TEST(Version, ReleaseIsTheProjectVersion) {
  EXPECT_EQ(version::release(), RDMABENCH_VERSION);
  EXPECT_FALSE(version::release().empty());
}

TEST(Version, DescribeAddsGitOnlyWhenKnown) {
  EXPECT_EQ(version::describe("0.2.0", ""), "0.2.0");
  EXPECT_EQ(version::describe("0.2.0", "dda7cb0-dirty"), "0.2.0 (git dda7cb0-dirty)");
}

TEST(Version, TableHeaderCarriesVersionAndGitDescribe) {
  report::RunInfo info = latencyRun();
  info.gitDescribe = "v0.2.0-3-gabcdef0";
  EXPECT_EQ(header("table", info)
                .rfind("# rdmabench " + version::release() + " (git v0.2.0-3-gabcdef0): lat, ", 0),
            0u)
      << header("table", info);
  info.gitDescribe = "";
  EXPECT_EQ(header("table", info).rfind("# rdmabench " + version::release() + ": lat, ", 0), 0u)
      << header("table", info);
}

TEST(Version, JsonRunCarriesGitDescribeOrNull) {
  report::RunInfo info = latencyRun();
  info.gitDescribe = "abcdef0";
  auto doc = nlohmann::json::parse(header("json", info));
  EXPECT_EQ(doc["version"], version::release());
  EXPECT_EQ(doc["run"]["tool_version"], version::release());
  EXPECT_EQ(doc["run"]["git_describe"], "abcdef0");
  info.gitDescribe = "";
  doc = nlohmann::json::parse(header("json", info));
  EXPECT_TRUE(doc["run"]["git_describe"].is_null()) << doc.dump();
  // Unset: this build's own describe (null when not built from a git checkout).
  info.gitDescribe.reset();
  doc = nlohmann::json::parse(header("json", info));
  if (version::gitDescribe().empty())
    EXPECT_TRUE(doc["run"]["git_describe"].is_null());
  else
    EXPECT_EQ(doc["run"]["git_describe"], version::gitDescribe());
}

}  // namespace
}  // namespace rdmabench
