#!/usr/bin/env bash
# Issue #26, instrument 4: 8 B allreduce (float32 sum) and barrier at 2, 4 and 8 local ranks,
# rdmabench against Open MPI running the OSU micro-benchmarks (osu_allreduce / osu_barrier, built
# from public source outside this repository) on the same transport class, interleaved:
#   socket : Open MPI pml ob1 + btl tcp,self (no vader/sm)  vs  rdmabench --transport socket
#   ofi    : Open MPI pml cm + mtl ofi, provider tcp;ofi_rxm vs  rdmabench --transport ofi
#            --provider 'tcp;ofi_rxm'
# Everything on loopback: btl_tcp_if_include/oob_tcp_if_include lo, FI_TCP_IFACE=lo (libfabric
# tcp), rdmabench --ifname =lo (its data plane; the ofi domain is lo). Same size (-m 8:8), same
# measured and warmup iterations, the same timing (each call timed alone; allreduce followed by
# an untimed barrier; t_avg = mean over ranks of each rank's mean, OSU's "Avg Latency(us)").
#
# Binding: Open MPI binds each rank to a core when ranks <= cores and binds nothing when
# oversubscribed; the same here for both (--bind-to core / rdmabench --cpu 0-(N-1), else
# --bind-to none / no --cpu).
# Progress: Open MPI has no blocking mode; it busy-polls (opal_progress), with sched_yield in the
# spin when the node is oversubscribed (mpi_yield_when_idle, set here explicitly when ranks >
# cores). rdmabench uses its default -e: busy-poll when ranks <= cores, yield (busy-poll with
# sched_yield() per empty poll, the same as mpi_yield_when_idle) when oversubscribed; before
# yield mode it slept on epoll/FI_WAIT_FD there (its plain busy-poll does not yield: at 8 ranks
# on 2 cores -e off needs ~100 ms per iteration). RB_EVENT=on|off|yield forces one mode; the mode
# used is in the output (progress).
#
# OSU (not in this repository), e.g. 7.0.1 (github lrbison/osu-micro-benchmarks at bfa562c3,
# "Added osu v7.0.1 from tarball"), built with Debian's Open MPI outside the tree:
#   cd osu/c/mpi/collective && for b in osu_allreduce osu_barrier; do mpicc -O2 \
#     -DPACKAGE_VERSION='"7.0.1"' -I../../util -o /work/osu-build/$b $b.c ../../util/osu_util.c \
#     ../../util/osu_util_mpi.c ../../util/osu_util_graph.c ../../util/osu_util_papi.c -lm; done
#
# Usage: bench/collectives/osu_vs_rdmabench.sh OSU_ALLREDUCE OSU_BARRIER RDMABENCH
#   (or the environment variables OSU_ALLREDUCE, OSU_BARRIER, RDMABENCH)
# Environment: REPS (5), ITERS (1000), WARMUP (200; OSU's defaults for small sizes),
#   RANKS ("2 4 8"), OPS ("allreduce barrier"), TRANSPORTS ("socket ofi"), RB_EVENT (auto),
#   RB_ALGO (rdmabench allreduce --algo; default: rdmabench's own default, auto: rd at 8 B),
#   RUN_TIMEOUT (300 s per run), RAW (file to keep the raw per-run lines; rdmabench's carry its
#   descheduling counters and slowest-rank p50 as an 11th field),
#   SUMMARY_ONLY (a RAW file of an earlier run: print its table, run nothing).
# Run under `flock /tmp/rdmabench-systest.lock` (loopback ports). Prints a Markdown table.
set -euo pipefail

die() {
  echo "osu_vs_rdmabench: $*" >&2
  exit 2
}
summary() {
  python3 - "$1" <<'PY'
import sys, statistics as st
from collections import defaultdict
runs = defaultdict(dict)   # (ranks, op, transport) -> rep -> tool -> (avg, mode, algo)
for line in open(sys.argv[1]):
    rep, n, op, tr, tool, avg, mn, mx, mode, algo = line.rstrip('\n').split('\t')[:10]
    runs[(int(n), op, tr)].setdefault(rep, {})[tool] = (float(avg), mode, algo)
def span(v):
    return f"{st.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]" if v else "n/a"
print("| ranks | op | transport | progress osu / rdmabench | osu t_avg us | rdmabench t_avg us "
      "| ratio rdmabench/osu | reps | <= 0.5 |")
print("|---|---|---|---|---|---|---|---|---|")
order = {'socket': 0, 'ofi': 1}
for (n, op, tr) in sorted(runs, key=lambda k: (k[0], k[1], order.get(k[2], 9))):
    reps = runs[(n, op, tr)]
    o = [r['osu'][0] for r in reps.values() if 'osu' in r and r['osu'][0] == r['osu'][0]]
    b = [r['rdmabench'][0] for r in reps.values()
         if 'rdmabench' in r and r['rdmabench'][0] == r['rdmabench'][0]]
    # Paired per rep (the two ran back to back), then median and range over reps.
    ratio = [r['rdmabench'][0] / r['osu'][0] for r in reps.values()
             if 'osu' in r and 'rdmabench' in r and r['osu'][0] > 0
             and r['rdmabench'][0] == r['rdmabench'][0]]
    modes = lambda t: '/'.join(sorted({r[t][1] for r in reps.values() if t in r}))
    algo = '/'.join(sorted({r['rdmabench'][2] for r in reps.values() if 'rdmabench' in r}))
    rs = (f"{st.median(ratio):.2f} [{min(ratio):.2f}-{max(ratio):.2f}]" if ratio else "n/a")
    ok = ("yes" if max(ratio) <= 0.5 else ("median only" if st.median(ratio) <= 0.5 else "no")) \
        if ratio else "n/a"
    failed = sum(1 for r in reps.values() for t in r.values() if t[1] == 'failed')
    print(f"| {n} | {op} | {tr} | {modes('osu')} / {modes('rdmabench')} ({algo}) | {span(o)} "
          f"| {span(b)} | {rs} | {len(ratio)}{f', {failed} failed' if failed else ''} | {ok} |")
print()
print("t_avg: OSU's Avg Latency(us) and rdmabench's t_avg_us (mean over ranks of each rank's "
      "mean); median [min-max] over reps; the ratio is paired per rep. '<= 0.5': yes = in every "
      "rep, 'median only' = the median holds but not every rep.")
PY
}
if [[ -n ${SUMMARY_ONLY:-} ]]; then
  summary "$SUMMARY_ONLY"
  exit 0
fi
OSU_ALLREDUCE=${1:-${OSU_ALLREDUCE:-}}
OSU_BARRIER=${2:-${OSU_BARRIER:-}}
RDMABENCH=${3:-${RDMABENCH:-}}
[[ -n $OSU_ALLREDUCE && -n $OSU_BARRIER && -n $RDMABENCH ]] ||
  die "usage: $0 path/to/osu_allreduce path/to/osu_barrier path/to/rdmabench"
for b in "$OSU_ALLREDUCE" "$OSU_BARRIER" "$RDMABENCH"; do
  [[ -x $b ]] || die "not an executable file: $b"
done
command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
command -v python3 >/dev/null || die "python3 not found"
REPS=${REPS:-5} ITERS=${ITERS:-1000} WARMUP=${WARMUP:-200}
RANKS=${RANKS:-"2 4 8"} OPS=${OPS:-"allreduce barrier"} TRANSPORTS=${TRANSPORTS:-"socket ofi"}
RB_EVENT=${RB_EVENT:-auto} RB_ALGO=${RB_ALGO:-} RUN_TIMEOUT=${RUN_TIMEOUT:-300}
CORES=$(nproc)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
RAWF=${RAW:-$TMP/raw.tsv}
: >"$RAWF"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FI_TCP_IFACE=lo

# Open MPI's options for transport $1 at $2 ranks.
mpi_args() {
  local a=(--oversubscribe -np "$2" --mca oob_tcp_if_include lo --mca btl "tcp,self"
    --mca btl_tcp_if_include lo -x FI_TCP_IFACE)
  if [[ $1 == socket ]]; then
    a+=(--mca pml ob1)
  else
    a+=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "tcp;ofi_rxm"
      -x FI_PROVIDER="tcp;ofi_rxm")
  fi
  if ((${2} > CORES)); then
    a+=(--bind-to none --mca mpi_yield_when_idle 1)
  else
    a+=(--bind-to core)
  fi
  printf '%s\n' "${a[@]}"
}

# One OSU run: op $1, transport $2, ranks $3, rep $4; appends a raw line.
run_osu() {
  local bin=$OSU_ALLREDUCE size=(-m 8:8) out=$TMP/osu.txt
  [[ $1 == barrier ]] && bin=$OSU_BARRIER size=()
  mapfile -t args < <(mpi_args "$2" "$3")
  if ! timeout "$RUN_TIMEOUT" mpirun "${args[@]}" "$bin" "${size[@]}" -i "$ITERS" -x "$WARMUP" -f \
    >"$out" 2>"$TMP/osu.err"; then
    echo "osu_vs_rdmabench: osu $1 $2 np $3 failed:" >&2
    tail -5 "$TMP/osu.err" "$out" >&2
    printf '%s\t%s\t%s\t%s\tosu\tnan\tnan\tnan\tfailed\t-\n' "$4" "$3" "$1" "$2" >>"$RAWF"
    return 0
  fi
  # Allreduce: "8 avg min max iters"; barrier: "avg min max iters".
  awk -v rep="$4" -v n="$3" -v op="$1" -v tr="$2" '
    !/^#/ && NF >= 4 { if (op == "allreduce") { a=$2; mn=$3; mx=$4 } else { a=$1; mn=$2; mx=$3 }
      printf "%s\t%s\t%s\t%s\tosu\t%s\t%s\t%s\tbusy-poll%s\t%s\n", rep, n, op, tr, a, mn, mx,
        (n > c ? "+yield" : ""), "ompi-tuned" }' c="$CORES" \
    "$out" >>"$RAWF"
}

# One rdmabench run: op $1, transport $2, ranks $3, rep $4; appends a raw line.
run_rb() {
  local args=("$1" --np "$3" --transport "$2" --ifname "=lo" -n "$ITERS" --warmup "$WARMUP"
    --timeout 60 -f json -o "$TMP/rb.json" --quiet)
  [[ $1 == allreduce ]] && args+=(-m 8:8)
  [[ $1 == allreduce && -n $RB_ALGO ]] && args+=(--algo "$RB_ALGO")
  (($3 <= CORES)) && args+=(--cpu "0-$(($3 - 1))")
  [[ $2 == ofi ]] && args+=(--provider "tcp;ofi_rxm")
  [[ $RB_EVENT != auto ]] && args+=(-e "$RB_EVENT")
  rm -f "$TMP/rb.json"
  if ! timeout "$RUN_TIMEOUT" "$RDMABENCH" "${args[@]}" >"$TMP/rb.out" 2>&1; then
    echo "osu_vs_rdmabench: rdmabench $1 $2 np $3 failed:" >&2
    tail -5 "$TMP/rb.out" >&2
    printf '%s\t%s\t%s\t%s\trdmabench\tnan\tnan\tnan\tfailed\t-\n' "$4" "$3" "$1" "$2" >>"$RAWF"
    return 0
  fi
  python3 - "$TMP/rb.json" "$4" "$3" "$1" "$2" "$RB_EVENT" >>"$RAWF" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
loc = d['run']['local']
mode = loc.get('progress') or ('event (FI_WAIT_FD)' if loc.get('event_mode') else 'busy-poll')
if d['run'].get('extra', {}).get('progress_note', '').startswith('auto: yield') or \
        sys.argv[6] == 'yield':  # ofi's facts say busy-poll: the yield is the engine's
    mode = 'yield' if not mode.startswith('yield') else mode
c = d['rows'][0]['collective']
ds = d['rows'][0].get('descheduled') or {}  # null (absent before): no rank was preempted
print('\t'.join([*sys.argv[2:6], 'rdmabench', str(c['t_avg_us']), str(c['t_min_us']),
                 str(c['t_max_us']), mode, c['algorithm'],
                 f"run_delay_us={ds.get('run_delay_us', 0)} invol={ds.get('involuntary_switches', 0)} "
                 f"slowest_p50_us={c.get('slowest_p50_us')}"]))
PY
}

echo "osu_vs_rdmabench: $REPS reps x ranks {$RANKS} x {$OPS} x {$TRANSPORTS}, $ITERS iters," \
  "$WARMUP warmup, $CORES cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq 1 "$REPS"); do
  for n in $RANKS; do
    for op in $OPS; do
      for tr in $TRANSPORTS; do
        # Alternate which tool goes first, so neither always runs right after the other.
        if ((rep % 2)); then
          run_osu "$op" "$tr" "$n" "$rep"
          run_rb "$op" "$tr" "$n" "$rep"
        else
          run_rb "$op" "$tr" "$n" "$rep"
          run_osu "$op" "$tr" "$n" "$rep"
        fi
      done
    done
  done
  echo "osu_vs_rdmabench: rep $rep done; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

summary "$RAWF"
