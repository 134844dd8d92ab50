#pragma once
// What this binary is (docs/cli.md, `rdmabench version`): the release version, set in one place
// (CMakeLists.txt, project(VERSION)), and the `git describe --always --dirty` of the checkout it
// was built from (cmake/GitDescribe.cmake writes it at build time; empty when the sources are not
// a git checkout, e.g. a release tarball). Thread-safe: constants only.

#include <string>

namespace rdmabench::version {

// The release version, "0.2.0".
std::string release();

// `git describe --always --dirty` of the source tree at build time ("v0.2.0-3-gdda7cb0-dirty",
// "dda7cb0"); empty when not built from a git checkout or git was not available.
std::string gitDescribe();

// What run headers print: "0.2.0", or "0.2.0 (git dda7cb0-dirty)" when gitDescribe is known.
std::string describe(const std::string& release, const std::string& gitDescribe);

}  // namespace rdmabench::version
