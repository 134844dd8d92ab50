#include "fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rdmabench::testing {

std::string fixturesDir() {
  return RDMABENCH_FIXTURES_DIR;
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RDMABENCH_FIXTURES_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name << " in " << RDMABENCH_FIXTURES_DIR;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rdmabench::testing
