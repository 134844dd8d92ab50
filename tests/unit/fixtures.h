#pragma once
// The text of tests/fixtures/NAME (tests/fixtures/README.md says how each was made), found next to
// this header; a missing file is a test failure and returns "".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rdmabench::testing {

inline std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rdmabench::testing
