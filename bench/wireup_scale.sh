#!/usr/bin/env bash
# Wire-up at scale: `rdmabench barrier --np N` (socket transport, event mode: more ranks than
# cores) for N in 64, 256, 1024; a few repetitions each. Goal (scale-out issue): N = 1024
# completes in < 5 s on a 2-core host, O(log N) connections per rank.
#
# Per N it prints one table row:
#   wall [s]        whole run (fork, store join, wire-up, one barrier, results, exit): median
#                   and min-max over the repetitions;
#   wire-up [s]     rank 0's `wireup_s` (device open to the end of the first barrier): median;
#   RSS/rank, PSS/rank [MiB]  at the sample with the largest total: mean VmRSS over ranks and
#                   their summed Pss (smaps_rollup: shared pages split between the sharers) / N;
#   sockets/rank    the largest number of socket descriptors any rank held (store connection,
#                   data-plane listeners and connections);
#   rank 0          the same for rank 0;
#   store server    the largest number of sockets of the store server (with --np: the launcher
#                   process; under Slurm/tcp://: a thread of rank 0).
# Times come from REPS runs without sampling; memory and sockets from one more run sampled from
# /proc every ~50 ms (bench/wireup_sample.py; sampling 1024 processes costs CPU the ranks need),
# so a peak shorter than that may be missed; counts are of descriptors, not of TCP states.
#
# Usage: bench/wireup_scale.sh [path/to/rdmabench] [REPS] [N ...]
#   default: build/rdmabench, 3 repetitions, N = 64 256 1024.  RB_EXTRA="..." adds options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
RB=$(readlink -f "${1:-$here/../build/rdmabench}")
reps=${2:-3}
shift $(($# > 2 ? 2 : $#))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(64 256 1024)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "# host $(hostname), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), ulimit -n $(ulimit -n), ulimit -u $(ulimit -u)"
echo "# $("$RB" --version 2>/dev/null | head -1 || echo rdmabench): barrier --np N -n 1 --warmup 0 --use-event on ${RB_EXTRA:-}"
echo
echo "| ranks | wall [s] median (min-max) | wire-up rank 0 [s] | RSS/rank [MiB] | PSS/rank [MiB] | sockets/rank max | rank 0 sockets | store server sockets |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  for ((i = 0; i <= reps; i++)); do
    interval=0
    [ "$i" = 0 ] && interval=0.05 # run 0: sampled; runs 1..REPS: timed
    # shellcheck disable=SC2086
    timeout 300 python3 "$here/wireup_sample.py" "$TMP/s$n.$i.json" "$interval" -- \
      "$RB" barrier --np "$n" -n 1 --warmup 0 --use-event on --timeout 60 -f json \
      -o "$TMP/r$n.$i.json" ${RB_EXTRA:-} >"$TMP/log$n.$i" 2>&1 ||
      {
        echo "wireup_scale: N=$n rep $i failed:" >&2
        tail -5 "$TMP/log$n.$i" >&2
        exit 1
      }
  done
  python3 - "$TMP" "$n" "$reps" <<'PY'
import json, os, statistics, sys
tmp, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
walls, wires = [], []
for i in range(1, reps + 1):
    s = json.load(open(os.path.join(tmp, f"s{n}.{i}.json")))
    r = json.load(open(os.path.join(tmp, f"r{n}.{i}.json")))
    walls.append(s["wall_s"])
    wires.append(r["run"]["extra"]["wireup_s"])
x = json.load(open(os.path.join(tmp, f"s{n}.0.json")))
# A short run may end between two samples for some ranks: their memory and sockets are then not
# in the peaks, and the row says so.
seen = "" if x["ranks_seen"] == n else f" (sampler saw {x['ranks_seen']} of {n} ranks)"
med = statistics.median
print(f"| {n} | {med(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | {med(wires):.2f} "
      f"| {x['rss_per_rank_mib']:.1f} | {x['pss_per_rank_mib']:.1f} | {x['max_rank_sockets']} "
      f"| {x['rank0_sockets']} | {x['server_sockets']}{seen} |")
PY
done
