# Golden outputs (issue #25, "no behaviour change"): lat and bw (client against a real
# `rdmabench server`, socket and ofi tcp;ofi_rxm) and every N-rank command on loopback, in every
# output format each command offers. What varies between runs (measured numbers, clock and host
# facts, ports, pids, times) is masked by tests/system/golden_mask.py; everything else (headers,
# columns, member names and order, units, row counts, sizes, iteration counts, flags) must equal
# tests/golden/*.txt byte for byte. Regenerate after an intended change:
#   UPDATE_GOLDEN=1 bash tests/system/test_golden_outputs.sh build/rdmabench   (then review the diff)
source "$(dirname "$0")/lib.sh"
GOLDEN=$SRC/tests/golden
MASK=$SRC/tests/system/golden_mask.py
export GOLDEN_RB=$RB  # the masker writes the binary's path as "rdmabench"
mkdir -p "$TMP/got"

# case GROUP NAME FORMAT[:sort] CMD...: runs CMD (its stdout is the report) and appends the
# masked report to $TMP/got/GROUP.txt under a "=== NAME" line. FORMAT json is parsed, csv read by
# column, the others masked as text; ":sort": the rows come in a measured order (ring), sorted.
case_() {
  local group=$1 name=$2 fmt=${3%:sort} order=
  [ "$3" = "$fmt" ] || order=sort
  shift 3
  timeout 120 "$@" >"$TMP/out" 2>"$TMP/err" || fail "$name: $* failed: $(tail -3 "$TMP/err")"
  {
    echo "=== $name"
    echo "\$ ${*:2}" | sed -E "s|-p [0-9]+|-p PORT|g; s|$RB|rdmabench|g"
    python3 "$MASK" "$fmt" $order <"$TMP/out" || fail "$name: cannot mask its $fmt output"
  } >>"$TMP/got/$group.txt"
}

have_ofi() {
  "$RB" info --format json >"$TMP/info.json" 2>/dev/null || return 1
  python3 - "$TMP/info.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ofi = [t for t in d if t.get("transport") == "ofi" and t["usable"]]
sys.exit(0 if ofi and any(p["provider"] == "tcp;ofi_rxm" for p in ofi[0]["details"]["providers"]) else 1)
PY
}

PORT=$((20000 + ($$ + 11) % 20000))
background "$RB" server -p "$PORT" --bind 127.0.0.1 --quiet
SERVER=$BG_PID
wait_port "" "$PORT"

PT_FORMATS="table json csv perftest osu imb"
transports=(socket)
if have_ofi; then transports+=(ofi); else
  [ "${CI:-}" = true ] && fail "libfabric tcp;ofi_rxm must be usable in CI"
  echo "note: libfabric tcp;ofi_rxm not usable here: the ofi cases are not run"
fi
for t in "${transports[@]}"; do
  topt=(-t socket)
  [ "$t" = ofi ] && topt=(-t ofi --provider "tcp;ofi_rxm")
  for f in $PT_FORMATS; do
    case_ "lat_$t" "lat $t send $f" "$f" "$RB" lat 127.0.0.1 -p "$PORT" "${topt[@]}" -s 1,64,4K -n 20 --warmup 2 -f "$f"
    case_ "lat_$t" "lat $t write $f" "$f" "$RB" lat 127.0.0.1 -p "$PORT" "${topt[@]}" --op write -s 8,1K -n 20 --warmup 2 -f "$f"
    case_ "bw_$t" "bw $t send $f" "$f" "$RB" bw 127.0.0.1 -p "$PORT" "${topt[@]}" -s 64,8K -n 4 --warmup 1 -w 8 -f "$f"
    case_ "bw_$t" "bw $t write stream $f" "$f" "$RB" bw 127.0.0.1 -p "$PORT" "${topt[@]}" --op write --mode stream -s 1K -n 64 --warmup 8 --tx-depth 16 -f "$f"
    case_ "bw_$t" "bw $t bidir $f" "$f" "$RB" bw 127.0.0.1 -p "$PORT" "${topt[@]}" -b -s 4K -n 4 --warmup 1 -w 4 -f "$f"
  done
  case_ "lat_$t" "lat $t read json" json "$RB" lat 127.0.0.1 -p "$PORT" "${topt[@]}" --op read -s 256 -n 20 --warmup 2 -f json
  case_ "bw_$t" "bw $t read table --gbits" table "$RB" bw 127.0.0.1 -p "$PORT" "${topt[@]}" --op read -s 2K -n 4 --warmup 1 -w 4 --gbits
done
case_ lat_socket "lat socket osu --full" osu "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 2,16 -n 20 --warmup 2 -f osu --full
case_ bw_socket "bw socket qp2 json" json "$RB" bw 127.0.0.1 -p "$PORT" -t socket -q 2 -s 512 -n 4 --warmup 1 -w 4 -f json
case_ lat_socket "lat loopback-fork table" table "$RB" lat -t socket -s 32 -n 20 --warmup 2
kill -0 "$SERVER" || fail "the server died"

# -e on: the automatic progress mode (and its header note) depends on the host's CPU count.
COLL_FORMATS="table json csv osu imb"
for f in $COLL_FORMATS; do
  case_ allreduce "allreduce np3 $f" "$f" "$RB" allreduce -t socket -e on --np 3 -m 4:64 -n 3 --warmup 1 -f "$f"
  case_ allreduce "allreduce np4 ring $f" "$f" "$RB" allreduce -t socket -e on --np 4 --algo ring -s 1K -n 3 --warmup 1 -f "$f"
  case_ barrier "barrier np2 $f" "$f" "$RB" barrier -t socket -e on --np 2 -n 5 --warmup 1 -f "$f"
  case_ barrier "barrier np4 $f" "$f" "$RB" barrier -t socket -e on --np 4 -n 5 --warmup 1 -f "$f"
done
case_ allreduce "allreduce np2 osu --full" osu "$RB" allreduce -t socket -e on --np 2 -m 4:16 -n 3 --warmup 1 -f osu --full
for f in table json csv; do
  case_ ring "ring np3 $f" "$f:sort" "$RB" ring -t socket -e on --np 3 -n 20 --warmup 2 -f "$f"
  case_ pairs "pairs np3 $f" "$f" "$RB" pairs -t socket -e on --np 3 -n 20 --warmup 2 --bw-size 4K --bw-iters 2 -w 2 -f "$f"
  case_ congestion "congestion np4 $f" "$f" "$RB" congestion -t socket -e on --np 4 --victims 0.5 -n 20 --warmup 2 --bw-size 4K --bw-iters 2 -w 2 --agg-size 4K -f "$f"
done

if [ -n "${UPDATE_GOLDEN:-}" ]; then
  mkdir -p "$GOLDEN"
  cp "$TMP"/got/*.txt "$GOLDEN/"
  pass "golden outputs written to $GOLDEN (review with git diff)"
  exit 0
fi
bad=0
for g in "$TMP"/got/*.txt; do
  name=$(basename "$g")
  if [ ! -f "$GOLDEN/$name" ]; then
    echo "no golden file tests/golden/$name" >&2; bad=1; continue
  fi
  if ! diff -u "$GOLDEN/$name" "$g" >&2; then bad=1; fi
done
for g in "$GOLDEN"/*.txt; do
  [ -f "$TMP/got/$(basename "$g")" ] || { echo "golden file $g was not produced" >&2; bad=1; }
done
[ "$bad" = 0 ] || fail "outputs differ from tests/golden (intended? UPDATE_GOLDEN=1, review the diff)"
pass "every output equals tests/golden ($(ls "$TMP"/got | wc -l) files)"
