# Issue 36 item 4: `bw -t ofi --provider 'tcp;ofi_rxm' --mode stream -q N` on loopback. The
# connections share one rxm connection (one socket) underneath and the device's operation slots;
# before, the server replenished only the receives of the connection it waited for, so another
# connection's receives ran dry, its messages waited as unexpected ones and blocked the socket:
# `-q 2 -n 20000` (elsewhere) and `-q 4 -n 20000` (here) stalled until --timeout (exit 3) and
# `-q 2` at the default count ran ~9x slower than `-q 1`. Now every connection's receives stay posted (each its fair share of the
# shared slots): the runs finish with every message counted. Counts and completion are asserted,
# not speed (bench/ compares rates); the mechanism, no connection ever left without a posted
# receive, is a count in tests/integration/ofi_stream_qp_test.cc. ~10 s.
source "$(dirname "$0")/lib.sh"
"$RB" info --format json >"$TMP/info.json" || fail "info"
python3 - "$TMP/info.json" <<'PY' || skip "libfabric provider tcp;ofi_rxm not usable here"
import json, sys
d = json.load(open(sys.argv[1]))
ofi = [t for t in d if t.get("transport") == "ofi" and t["usable"]]
assert ofi and any(p["provider"] == "tcp;ofi_rxm" for p in ofi[0]["details"]["providers"])
PY

run() {  # run NAME QPS ITERS [more options]: must finish (generous --timeout) with every message
  local name=$1 q=$2 n=$3 rc=0; shift 3
  timeout 300 "$RB" bw -t ofi --provider "tcp;ofi_rxm" --mode stream -q "$q" -n "$n" -s 8 \
    --timeout 60 -f json -o "$TMP/$name.json" "$@" 2>"$TMP/$name.err" || rc=$?
  [ "$rc" = 0 ] || fail "bw stream -q $q -n $n $*: exit $rc: $(tail -3 "$TMP/$name.err")"
  json_check "$TMP/$name.json" "d['rows'][0]['iterations'] == $n and d['rows'][0]['messages'] == $n"
}
run q2 2 20000
run q4 4 20000
run q3bidir 3 2000 --bidir
pass "ofi tcp;ofi_rxm stream: -q 2 and -q 4 -n 20000 and -q 3 --bidir -n 2000 finish with every message"
