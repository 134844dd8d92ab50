#!/usr/bin/env bash
# The SHARP-enabled build: configures a separate build directory with RDMABENCH_WITH_SHARP=ON
# against the stand-in libsharp_coll (tests/sharp_standin, docs/collectives.md "SHARP"), builds
# rdmabench and the stand-in only, and runs tests/system/sharp/test_sharp_np.sh with that binary
# (info, --np 4 barrier and checked allreduce, injected failures). The default build's ctest
# runs both SHARP scripts (also 4 netns hosts) with the backend compiled against the stand-in in
# tests/. Cost on 2 idle cores: one rdmabench build (~3 min) + ~50 s of tests.
# Usage: ci/sharp.sh [BUILD_DIR]   (default: build-sharp); needs root for the netns test.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then exec sudo -E bash "$0" "$@"; fi
cd "$(dirname "$0")/.."
BUILD=${1:-build-sharp}

echo "== SHARP build ($BUILD, RDMABENCH_WITH_SHARP=ON, stand-in libsharp_coll)"
CONFIG=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMABENCH_WERROR=ON)
[ -z "${RDMABENCH_CI_RELWITHDEBINFO_FLAGS:-}" ] ||
  CONFIG+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$RDMABENCH_CI_RELWITHDEBINFO_FLAGS")
[ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] ||
  CONFIG+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER")
cmake -S . -B "$BUILD" "${CONFIG[@]}" -DRDMABENCH_WITH_SHARP=ON \
  -DSHARP_DIR="$PWD/tests/sharp_standin" >/dev/null
grep -q "^RDMABENCH_SHARP_INCLUDE_DIR:PATH=$PWD/tests/sharp_standin/include$" "$BUILD/CMakeCache.txt" ||
  { echo "FAIL: the SHARP build did not pick the stand-in header" >&2; exit 1; }
cmake --build "$BUILD" -j "$(nproc)" --target rdmabench sharp_coll_standin

echo "== SHARP tests ($BUILD)"
ctest --test-dir "$BUILD" -R test_sharp_np --output-on-failure --timeout 600 -j 1
