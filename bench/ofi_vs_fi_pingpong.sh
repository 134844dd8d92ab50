#!/usr/bin/env bash
# Side by side on loopback, in one run: rdmabench -t ofi latency against fabtests' fi_pingpong
# (Debian's libfabric-bin) for the same provider and sizes. fi_pingpong's usec/xfer is the mean
# half round trip (elapsed / 2 / iterations), so it is compared with rdmabench's t_avg;
# rdmabench's median is printed too.  ratio = rdmabench t_avg / fi_pingpong usec/xfer (goal < 1).
# Usage: bench/ofi_vs_fi_pingpong.sh [path/to/rdmabench] [iterations, default 2000]
set -euo pipefail
RB=$(readlink -f "${1:-build/rdmabench}")
N=${2:-2000}
command -v fi_pingpong >/dev/null || { echo "bench: fi_pingpong missing (libfabric-bin)" >&2; exit 1; }

fip() {  # provider endpoint size -> usec/xfer
  local prov=$1 ep=$2 size=$3 port=$((47000 + RANDOM % 1000))
  timeout 60 fi_pingpong -p "$prov" -e "$ep" -S "$size" -I "$N" -B "$port" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.5
  timeout 60 fi_pingpong -p "$prov" -e "$ep" -S "$size" -I "$N" -P "$port" 127.0.0.1 2>/dev/null |
    awk 'NR==2 {print $7}'
  wait "$srv" 2>/dev/null || true
}
rb() {  # provider size -> "t_avg median"
  "$RB" lat -t ofi --provider "$1" --domain lo -s "$2" -n "$N" --warmup 200 -f json |
    python3 -c 'import json,sys; l=json.load(sys.stdin)["rows"][0]["latency_us"]; print(l["mean"], l["median"])'
}
printf "%-34s %10s %10s %14s %8s\n" "figure (one-way us)" "rb t_avg" "rb median" "fi_pingpong" "ratio"

for size in 64 4096; do
  read -r avg med < <(rb "tcp;ofi_rxm" "$size")
  for ep in rdm msg; do
    prov="tcp;ofi_rxm"; [ "$ep" = msg ] && prov=tcp
    theirs=$(fip "$prov" "$ep" "$size")
    python3 -c "import sys; a,m,t=map(float,sys.argv[1:4]); print(f'{sys.argv[4]:<34} {a:10.2f} {m:10.2f} {t:14.2f} {a/t:8.2f}')" \
      "$avg" "$med" "${theirs:-nan}" "tcp;ofi_rxm ${size}B vs fi_pingpong -e $ep"
  done
done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); rdmabench: warmup 200 excluded; fi_pingpong: no warmup (its figure includes connection setup)"
