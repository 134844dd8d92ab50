#!/usr/bin/env bash
# The CI guard of issue #26 for the collectives: user-space instructions per iteration of
# allreduce (8 B, 2 ranks, tree and ring) and of barrier (2 ranks), counted by callgrind, each
# under its budget in docs/metrics.md (lines "budget:CASE = COUNT", section "Instructions per
# collective iteration"). A count, never a time.
#
# What is counted: every instruction inside the iteration (AllreducePlan::run, resp.
# Communicator::barrier; --toggle-collect) except the calls into the transport (Device::poll,
# Device::waitForEvent, Endpoint::postSend/postRecv) and the engine's idle path
# (Progress::idle, Communicator::busyCheck): the collective layer's own work per iteration,
# the plan, posts, waits and reductions. The ranks run over real loopback sockets, so how often
# a wait finds nothing depends on timing; excluding the poll path leaves only a few loop
# instructions per empty poll, and event mode (-e on) keeps empty polls to about one per wait.
# Calls to the allocator or to fmt's formatting made by the counted code (not inside the
# excluded calls: the store check behind busyCheck allocates on a time cadence) must not grow
# with the iteration count (issue #26: nothing in a timed iteration allocates or formats).
# Each case runs with N and 2N iterations; the difference divided by N cancels setup (warmup,
# lazy binding, the untimed calls), and the count is the mean over both ranks. The excluded
# names are the transport interface's: a new entry point used by the Communicator (a batch
# post) must join EXCLUDE, or its cost is counted.
#
# Usage: instructions_per_collective.sh RDMABENCH METRICS_MD [SANITIZE]
#   SANITIZE: the build's RDMABENCH_SANITIZE value; a sanitizer build skips (exit 77), as
#   valgrind cannot run sanitized binaries. COLL_IPI_N: iterations of the short run (500).
set -euo pipefail
bin=$1 metrics=$2 sanitize=${3:-OFF}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=callgrind_prelude.sh
source "$(dirname "$0")/callgrind_prelude.sh"

# Calls whose inclusive cost is not counted (regexes over demangled names).
EXCLUDE=(
  '::poll\(rdmabench::transport::Completion\*'
  '::waitForEvent\('
  '::post(Send|Recv)\(rdmabench::transport::MemoryRegion const&'
  'rdmabench::engine::Progress::idle\(\)'
  'rdmabench::collective::Communicator::busyCheck\(\)'
)

# count CASE N: the instructions both ranks spent in the counted functions, summed.
count() {
  local case=$1 n=$2 dir=$tmp/$1.$2 toggle args
  mkdir -p "$dir"
  case "$case" in
    allreduce_tree|allreduce_ring)
      toggle='rdmabench::collective::AllreducePlan::run(*'
      args=(allreduce --algo "${case#allreduce_}" -s 8) ;;
    barrier)
      toggle='rdmabench::collective::Communicator::barrier()'
      args=(barrier) ;;
  esac
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" --dump-instr=no \
    --collect-atstart=no "--toggle-collect=$toggle" \
    "$bin" "${args[@]}" -t socket -e on --np 2 -n "$n" --warmup 2 --clock monotonic \
    --timeout 60 -f json >"$dir/out.json" 2>"$dir/log" || {
    tail -20 "$dir/log" >&2; echo "FAIL: rdmabench ${args[*]} -n $n under callgrind" >&2; exit 1; }
  local sum=0 allocs=0 ranks=0 f c a
  for f in "$dir"/cg.*; do
    read -r c a <<<"$(python3 "$here/callgrind_kept.py" "$f" "${EXCLUDE[@]}")"
    ((c > 0)) || continue  # the launcher: nothing collected
    sum=$((sum + c)) allocs=$((allocs + a)) ranks=$((ranks + 1))
  done
  if ((ranks != 2)); then echo "FAIL: $case: $ranks rank profiles with counts, not 2" >&2; exit 1; fi
  echo "$sum $allocs"
}

fail=0
N=${COLL_IPI_N:-500}
for case in allreduce_tree allreduce_ring barrier; do
  budget=$(sed -n "s/^.*budget:$case = \([0-9]*\).*$/\1/p" "$metrics" | head -1)
  if [[ -z "$budget" ]]; then echo "FAIL: no budget:$case line in $metrics"; exit 1; fi
  short=$(count "$case" "$N")
  long=$(count "$case" $((2 * N)))
  read -r a aa <<<"$short"
  read -r b ba <<<"$long"
  per=$(((b - a) / (2 * N)))       # per iteration and rank
  allocs=$(((ba - aa) / N))        # both ranks: 0 unless an iteration allocates or formats
  verdict=ok
  if ((per > budget)); then verdict=OVER; fail=1; fi
  if ((allocs > 0)); then verdict="$verdict, ALLOCATES ($((ba - aa)) more calls in $N more iterations)"; fail=1; fi
  printf '%-15s %6d instructions/iteration/rank (budget %d), allocations/iteration (both ranks) %d: %s\n' \
    "$case" "$per" "$budget" "$allocs" "$verdict"
done
exit $fail
