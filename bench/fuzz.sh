#!/usr/bin/env bash
# Long fuzzing run for the closing notes of hardening work (docs/testing.md, "Fuzzing"): every
# libFuzzer target of fuzz/targets.txt for at least RUNS executions (default 10^6) from its seed
# corpus, two at a time, then the table target / executions / crashes / exec/s / coverage.
# Configures and builds BUILD_DIR (default build-fuzz) with clang when needed. Exits non-zero on
# any crash, leak, timeout or out-of-memory (the input is printed).
# Usage: bench/fuzz.sh [BUILD_DIR] [RUNS] [TARGET...]
#   FUZZ_MAX_TIME=SECONDS additionally caps each target's time (a loaded machine); the table then
#   shows the executions reached.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-fuzz}
RUNS=${2:-1000000}
shift $(($# > 2 ? 2 : $#))
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DRDMABENCH_FUZZ=ON \
    -DRDMABENCH_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j 2 --target fuzz
echo "== fuzz: -runs=$RUNS per target ($(clang++ --version | head -1))"
start=$SECONDS
rc=0
cap=()
[ -z "${FUZZ_MAX_TIME:-}" ] || cap=(--time "$FUZZ_MAX_TIME")
nice fuzz/run.sh "$BUILD" --runs "$RUNS" "${cap[@]}" --jobs 2 "$@" || rc=$?
echo "== $((SECONDS - start)) s"
exit $rc
