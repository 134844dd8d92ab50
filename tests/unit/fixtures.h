#pragma once
// The text of tests/fixtures/NAME (tests/fixtures/README.md says how each was made), found by the
// absolute path CMake compiles into fixtures.cc (not __FILE__: ccache's base_dir makes that
// relative, and the tests run from another directory); a missing file is a test failure and
// returns "".
#include <string>

namespace rdmabench::testing {

std::string fixture(const std::string& name);

// The absolute path of tests/fixtures.
std::string fixturesDir();

}  // namespace rdmabench::testing
