#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/targets.txt from a copy of their seed corpus
# (fuzz/corpus/<target>; the repository is never written) and prints one line per target:
# executions, crashes, exec/s, coverage (libFuzzer's final cov:). Any crash, leak, timeout or
# out-of-memory fails the run; the log tail and the input (hexdump and base64) are printed.
# Usage: fuzz/run.sh BUILD_DIR [--time SECONDS] [--runs N] [--jobs J] [TARGET...]
#   --time / --runs: per-target bounds (at least one; with both, the first reached ends it).
#   BUILD_DIR: a build configured with -DCMAKE_CXX_COMPILER=clang++ -DRDMABENCH_FUZZ=ON, targets
#   built (`cmake --build BUILD_DIR --target fuzz`). --jobs: targets run side by side (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: fuzz/run.sh BUILD_DIR (--time S | --runs N) [--jobs J] [TARGET...]" >&2; exit 2; }
BUILD=$1
shift
LIMIT=() JOBS=2 ONLY=()
while [ $# -gt 0 ]; do
  case $1 in
    --time) LIMIT+=(-max_total_time="$2"); shift 2 ;;
    --runs) LIMIT+=(-runs="$2"); shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) ONLY+=("$1"); shift ;;
  esac
done
[ ${#LIMIT[@]} -gt 0 ] || { echo "fuzz/run.sh: give --time or --runs" >&2; exit 2; }

declare -A MAXLEN
TARGETS=()
while read -r name len; do
  [[ -z $name || $name == \#* ]] && continue
  if [ ${#ONLY[@]} -gt 0 ] && [[ " ${ONLY[*]} " != *" $name "* ]]; then continue; fi
  MAXLEN[$name]=$len
  TARGETS+=("$name")
done <fuzz/targets.txt
[ ${#TARGETS[@]} -gt 0 ] || { echo "fuzz/run.sh: no such target: ${ONLY[*]}" >&2; exit 2; }

WORK=$(mktemp -d /tmp/rdmabench-fuzz.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

run_one() {
  local t=$1 bin=$BUILD/fuzz/fuzz_$1
  [ -x "$bin" ] || { echo "fuzz/run.sh: $bin missing (cmake --build $BUILD --target fuzz)" >"$WORK/$t.log"; echo 99 >"$WORK/$t.rc"; return; }
  mkdir -p "$WORK/corpus-$t" "$WORK/art-$t"
  cp -r fuzz/corpus/"$t"/. "$WORK/corpus-$t/" 2>/dev/null || true
  local dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  local rc=0
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: 2 GiB is an out-of-memory.
  # A small quarantine: the readers allocate 64 KiB buffers per input, and ASan's default 256 MiB
  # quarantine made every execution fault in fresh pages (3x slower).
  ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16:malloc_context_size=10 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" "${LIMIT[@]}" -max_len="${MAXLEN[$t]}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$WORK/art-$t/" "${dict[@]}" "$WORK/corpus-$t" \
    >"$WORK/$t.log" 2>&1 || rc=$?
  echo $rc >"$WORK/$t.rc"
}

running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$t" &
  running=$((running + 1))
done
wait

failed=0
printf '%-18s %12s %8s %10s %9s\n' target executions crashes exec/s coverage
for t in "${TARGETS[@]}"; do
  log=$WORK/$t.log
  rc=$(cat "$WORK/$t.rc")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1 | sed 's/.*cov: //')
  crashes=$(find "$WORK/art-$t" -type f | wc -l)
  printf '%-18s %12s %8s %10s %9s\n' "$t" "${execs:-?}" "$crashes" "${speed:-?}" "${cov:-?}"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
    failed=1
    echo "---- $t: exit $rc; log tail:"
    tail -n 60 "$log"
    for f in "$WORK/art-$t"/*; do
      [ -f "$f" ] || continue
      echo "---- $t: input $(basename "$f") ($(stat -c %s "$f") bytes), hexdump (first 1 KiB):"
      head -c 1024 "$f" | od -A x -t x1z -v
      echo "---- base64 (first 64 KiB; decode with base64 -d > crash and run: $BUILD/fuzz/fuzz_$t crash):"
      head -c 65536 "$f" | base64 -w 76
    done
  fi
done
exit $failed
