#!/usr/bin/env bash
# rdmabench noise vs the kernel's osnoise tracer (`rtla osnoise top`), side by side on the same
# cores in one VM boot, interleaved A B A B ... (issue 27).
#
#   bench/noise_vs_rtla.sh [--build DIR] [--reps N] [--duration S] [--threshold US]
#
# The osnoise tracer is not in Debian's generic kernel (CONFIG_OSNOISE_TRACER is set only in the
# PREEMPT_RT flavour) nor in this host's kernel, so the VM boots Debian's -rt kernel from its own
# cache (ci/rxe-vm with RXE_VM_KERNEL / RXE_VM_CACHE; `prepare` downloads it once, ~70 MB).
# rtla comes from Debian (`apt-get install rtla`); the guest uses the host's root, so it is
# installed on the host.
# Like for like: both on CPUs 0-1, both for --duration s per rep, the same detour threshold
# (osnoise -T, rdmabench --threshold; default 5 us, osnoise's own default). Compared per CPU:
#   noise %:  rtla 100 - "% CPU Aval"      vs rdmabench "stolen%"
#   longest:  rtla "Max Single" (us)       vs rdmabench "max[us]"
# Output: per rep and CPU both figures and the ratio rdmabench / rtla; then the median ratio and
# its min-max spread. Under TCG on a shared host the noise is the emulation's: the figures
# compare the two tools on the same noisy machine, not a real node.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=3
DURATION=5
THRESHOLD=5
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --threshold) THRESHOLD=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--duration S] [--threshold US]" >&2; exit 2 ;;
  esac
done
command -v rtla >/dev/null || { echo "rtla is missing: apt-get install rtla" >&2; exit 2; }
export RXE_VM_KERNEL=${RXE_VM_KERNEL:-$(apt-cache depends linux-image-rt-amd64 2>/dev/null |
  sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-rt-amd64\) *$/\1/p' | head -n 1)}
export RXE_VM_CACHE=${RXE_VM_CACHE:-/var/cache/rdmabench-rxe-vm-rt}
[ -n "$RXE_VM_KERNEL" ] || { echo "no -rt kernel found (apt-cache depends linux-image-rt-amd64)" >&2; exit 2; }
"$SRC/ci/rxe-vm" prepare >/dev/null
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg); kernel $RXE_VM_KERNEL"
GUEST=$(mktemp /tmp/noise-vs-rtla.XXXXXX.sh)
LOG=$(mktemp /tmp/noise-vs-rtla.XXXXXX.log)
trap 'rm -f "$GUEST" "$LOG"' EXIT
cat >"$GUEST" <<EOF
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
for i in \$(seq 1 $REPS); do
  echo "== rtla \$i"
  timeout 120 rtla osnoise top -c 0-1 -d ${DURATION}s -T $THRESHOLD -q 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
  echo "== rdmabench \$i"
  timeout 180 "$BUILD/rdmabench" noise --np 2 -D $DURATION --threshold $THRESHOLD 2>&1
done
EOF
"$SRC/ci/rxe-vm" run --timeout $((120 + REPS * DURATION * 8)) --cpus 2 -q -- bash "$GUEST" >"$LOG" 2>&1
python3 - "$LOG" <<'EOF'
import re, statistics, sys
rtla, rb, cur = {}, {}, None
for line in open(sys.argv[1]):
    m = re.match(r"== (rtla|rdmabench) (\d+)", line)
    if m:
        cur = (m.group(1), int(m.group(2)))
        continue
    f = line.split()
    if cur and cur[0] == "rtla" and len(f) >= 7 and f[0].isdigit() and f[1].startswith("#"):
        rtla[(cur[1], int(f[0]))] = (100 - float(f[4]), float(f[6]))
    if cur and cur[0] == "rdmabench" and len(f) >= 9 and f[0].isdigit() and re.match(r"^[\d.]+$", f[3]):
        rb[(cur[1], int(f[2]))] = (float(f[4]), float(f[5]))
ratios = []
print("rep cpu  rtla noise%  rdmabench stolen%  ratio   rtla max single[us]  rdmabench max[us]")
for k in sorted(rtla):
    if k not in rb:
        continue
    r = rb[k][0] / rtla[k][0] if rtla[k][0] > 0 else float("nan")
    ratios.append(r)
    print(f"{k[0]:3} {k[1]:3}  {rtla[k][0]:11.2f}  {rb[k][0]:17.2f}  {r:5.3f}   {rtla[k][1]:19.0f}  {rb[k][1]:17.0f}")
if not ratios:
    sys.exit("no paired figures: see the VM log")
print(f"noise % ratio rdmabench / rtla: median {statistics.median(ratios):.3f} "
      f"[{min(ratios):.3f}-{max(ratios):.3f}] over {len(ratios)} rep x CPU")
EOF
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
