#pragma once
// Shared by the lib/compare unit tests: the hand-written fixtures of tests/fixtures, read and
// parsed.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
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

// The message of the rdmabench::Error `f` throws, or "(no error)".
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace rdmabench::compare::test_util
