#!/usr/bin/env bash
# Builds rdmabench (warnings are errors), runs the unit tests under ASan+UBSan, then the whole
# suite with ctest: unit, integration (every transport present), system (CLI on loopback,
# netns hosts, the soft-RoCE VM). Needs root for netns and the VM; re-runs itself under sudo.
# Usage: ci/test.sh [BUILD_DIR]   (default: build)
set -euo pipefail
if [ "$(id -u)" != 0 ]; then exec sudo -E bash "$0" "$@"; fi
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOBS=$(nproc)

echo "== clang-format check"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

echo "== build ($BUILD)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$JOBS"

echo "== unit tests under ASan+UBSan ($BUILD-asan)"
cmake -S . -B "$BUILD-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRDMABENCH_SANITIZE=ON >/dev/null
cmake --build "$BUILD-asan" -j "$JOBS" --target unit_tests
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD-asan/tests/unit_tests" --gtest_brief=1

echo "== ctest (unit, integration, system)"
ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j 1
