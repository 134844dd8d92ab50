#pragma once
// Shared by the lib/compare unit tests: the hand-written fixtures of tests/fixtures, read and
// parsed.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compare/parse.h"
#include "fixtures.h"

namespace rdmabench::compare::test_util {

// The text of fixture `name` (a test failure when it is missing).
inline std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(rdmabench::testing::fixturesDir()) / name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Fixture `name` parsed (compare::parseText; throws as it does).
inline std::vector<Series> parseFixture(const std::string& name) {
  return parseText(fixture(name), name);
}

}  // namespace rdmabench::compare::test_util
