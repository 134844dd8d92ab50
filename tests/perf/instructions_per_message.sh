#!/usr/bin/env bash
# Instrument 2 of issue #26 as a CI guard that cannot flake: user-space instructions per
# message of the engine's timed loops on the null transport (bench/engine_ceiling), counted by
# callgrind (deterministic: load and emulation do not change a count). Each case runs twice,
# with N and 2N messages; the difference divided by N cancels setup and teardown, so what is
# left is the post + completion path per message. Each count must stay under its budget in
# docs/metrics.md (lines "budget:CASE = COUNT", section "Instructions per message").
#
# Usage: instructions_per_message.sh ENGINE_CEILING METRICS_MD [SANITIZE]
#   SANITIZE: the build's RDMABENCH_SANITIZE value; a sanitizer build skips (exit 77), as
#   valgrind cannot run sanitized binaries.
set -euo pipefail
bin=$1 metrics=$2 sanitize=${3:-OFF}
# shellcheck source=callgrind_prelude.sh
source "$(dirname "$0")/callgrind_prelude.sh"

# Total instructions (Ir) of one run of CASE with N messages.
count() {
  local case=$1 n=$2 out=$tmp/cg.$1.$2
  valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no \
    "$bin" --only "$case" --messages "$n" >"$tmp/log.$1.$2" 2>&1 || {
    cat "$tmp/log.$1.$2"; echo "FAIL: engine_ceiling --only $case --messages $n"; exit 1; }
  awk '/^summary:/ {print $2}' "$out"
}

fail=0
N=20000
for case in bw bw32 pp; do
  budget=$(sed -n "s/^.*budget:$case = \([0-9]*\).*$/\1/p" "$metrics" | head -1)
  if [[ -z "$budget" ]]; then echo "FAIL: no budget:$case line in $metrics"; exit 1; fi
  a=$(count "$case" "$N")
  b=$(count "$case" $((2 * N)))
  per=$(((b - a) / N))
  verdict=ok
  if ((per > budget)); then verdict=OVER; fail=1; fi
  printf '%-5s %6d instructions/message (budget %d) %s\n' "$case" "$per" "$budget" "$verdict"
done
exit $fail
