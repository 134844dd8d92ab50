# Known answer for bandwidth: two netns hosts joined by a veth pair shaped with
# `tc qdisc ... tbf rate 200mbit` on both ends. No bandwidth figure may exceed the link's TCP
# goodput limit, 25 MB/s x 1448/1514 = 23.9 MB/s at a 1500 B MTU (tbf counts whole Ethernet
# frames; 1448 payload bytes per 1514-byte frame with TCP timestamps), or for a short run the
# rate at which the link can carry its bytes once tbf's 16 KiB bucket went through at veth
# speed (2 x 64 KiB: 27.1 MB/s). Runs `bw` send and write,
# window and stream modes, socket and tcp;ofi_rxm, including short runs (-n 2, where data still
# in flight at the end would inflate the figure most); write may not exceed both send and qperf
# by more than 3%;
# every figure is compared with qperf tcp_bw on the same link in the same test (ratio printed
# and asserted). Also --check with a test-only fault hook. About 60 s.
source "$(dirname "$0")/lib.sh"
need_root
command -v tc >/dev/null || fail "tc (iproute2) is missing"
command -v qperf >/dev/null || fail "qperf is missing (ci/install-deps.sh installs it)"
netns_pair
A=(ip netns exec "$NS_A")
B=(ip netns exec "$NS_B")
for pair in "$NS_A va$$" "$NS_B vb$$"; do
  set -- $pair
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate 200mbit burst 16kb latency 100ms ||
    fail "tc tbf on $2"
done

LIMIT=23.9                     # MB/s, TCP goodput of a 200 Mbit/s link at 1500 B MTU
background "${A[@]}" qperf --listen_port 19766
background "${A[@]}" "$RB" server --port 18516
wait_port "$NS_A" 18516
wait_port "$NS_A" 19766

# qperf tcp_bw, 64 KiB messages, 3 s: MB/sec in 10^6 B/s.
QP=$("${B[@]}" qperf --listen_port 19766 -t 3 -m 64K "$IP_A" tcp_bw |
  awk '/bw *=/ {v=$3; u=$4; if (u ~ /^GB/) v*=1000; else if (u ~ /^KB/) v/=1000; print v}')
[ -n "$QP" ] || fail "qperf tcp_bw printed no figure"
echo "qperf tcp_bw 64K: $QP MB/s (limit $LIMIT)"

RESULTS=$TMP/results.txt
: >"$RESULTS"
run_bw() {  # label, rdmabench bw args...
  local label=$1
  shift
  "${B[@]}" timeout 120 "$RB" bw "$IP_A" --port 18516 -s 64K -f json -o "$TMP/$label.json" "$@" ||
    fail "bw $label ($*)"
  python3 - "$TMP/$label.json" "$label" >>"$RESULTS" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["rows"][0]
print(sys.argv[2], r["mb_per_s"], r["peer_mb_per_s"] or 0, r["messages"] * r["bytes"])
PY
}

for t in socket ofi; do
  extra=(-t $t)
  [ $t = ofi ] && extra=(-t ofi --provider "tcp;ofi_rxm")
  for op in send write; do
    run_bw "$t-$op-window" "${extra[@]}" --op $op --mode window -n 10 --warmup 1
    run_bw "$t-$op-window-n2" "${extra[@]}" --op $op --mode window -n 2 --warmup 0
    run_bw "$t-$op-stream" "${extra[@]}" --op $op --mode stream -n 300 --warmup 32
    run_bw "$t-$op-stream-n2" "${extra[@]}" --op $op --mode stream -n 2 --warmup 0
  done
done

python3 - "$RESULTS" "$LIMIT" "$QP" <<'PY' || fail "shaped-link known answers (see above)"
import sys
rows = {}
for line in open(sys.argv[1]):
    label, mb, peer, total = line.split()
    rows[label] = (float(mb), float(peer), int(total))
limit, qp = float(sys.argv[2]), float(sys.argv[3])
bad = []
print(f"{'run':<24} {'MB/s':>8} {'peer':>8} {'/qperf':>7}")
BURST = 16 * 1024  # tbf's bucket (burst 16kb): that many frame bytes leave at veth speed
for label, (mb, peer, total) in rows.items():
    ratio = mb / qp
    # The fastest the link can deliver `total` payload bytes: the frames (1514 per 1448 payload
    # bytes) minus the bucket, at 200 Mbit/s. For long runs this is the goodput limit; for the
    # -n 2 stream runs (2 x 64 KiB) the bucket lets ~12% more through (27.1 MB/s), which is
    # the link, not an error of ours.
    frames = total * 1514 / 1448
    run_limit = max(limit, total / max(frames - BURST, 1) * 25.0) if total else limit
    print(f"{label:<24} {mb:8.2f} {peer:8.2f} {ratio:7.3f}   (limit {run_limit:.2f})")
    # -n 2 runs carry little data (128 or 2 messages); only the physical limit applies there.
    if mb > run_limit:
        bad.append(f"{label}: {mb:.2f} MB/s above the link's limit {run_limit:.2f} for "
                   f"{total} bytes")
    # The target's own interval starts when it sees the start marker; a poll that also places
    # the first writes shortens it by up to one message (64 KiB), and tbf lets its 16 KiB burst
    # through at line rate: over these >= 1.7 s runs that is < 1% (seen: 23.94 for 23.9).
    # Tiny runs (-n 2) are not held to it (the target figure is not the headline).
    if peer > limit * 1.01 and not label.endswith("-n2"):
        bad.append(f"{label}: target figure {peer:.2f} MB/s above the link's limit {limit}")
    # Upper bound: never faster than the independent tool beyond noise. Lower bound: sane.
    if not label.endswith("-n2") and not (0.5 <= ratio <= 1.05):
        bad.append(f"{label}: ratio to qperf tcp_bw {ratio:.3f} outside 0.5..1.05")
for t in ("socket", "ofi"):
    for m in ("window", "stream"):
        w, s = rows[f"{t}-write-{m}"][0], rows[f"{t}-send-{m}"][0]
        print(f"{t} {m}: write/send = {w / s:.3f}, write/qperf = {w / qp:.3f}")
        # Write must not beat both send and qperf by more than 3% (an inflated write is what
        # this catches; on a loaded host send can fall below the link while write does not).
        if w > max(s, qp) * 1.03:
            bad.append(f"{t} {m}: write {w:.2f} MB/s above send {s:.2f} and qperf {qp:.2f} by > 3%")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
pass "bw on a 200 Mbit/s tbf link: every figure within the link's limit, write <= max(send, qperf) + 3%, ratios to qperf"

# --check: clean runs report #wrong 0; a test-only fault hook in the socket backend
# (RDMABENCH_TEST_CORRUPT_EVERY=N flips a byte of every Nth incoming payload) must be caught.
for t in socket ofi; do
  for op in send write; do
    for m in window stream; do
      "${B[@]}" timeout 60 "$RB" bw "$IP_A" --port 18516 -t $t -s 4K -n 3 --op $op --mode $m \
        --check --bidir -f json -o "$TMP/chk-$t$op$m.json" || fail "bw --check $t $op $m (clean)"
      json_check "$TMP/chk-$t$op$m.json" "d['rows'][0]['wrong']==0"
    done
  done
  for op in write read; do
    "${B[@]}" timeout 60 "$RB" lat "$IP_A" --port 18516 -t $t -s 1,4K -n 20 --op $op --check \
      -f json -o "$TMP/lchk-$t$op.json" || fail "lat --check $t $op (clean)"
    json_check "$TMP/lchk-$t$op.json" "all(r['wrong']==0 for r in d['rows'])"
  done
done
background "${A[@]}" env RDMABENCH_TEST_CORRUPT_EVERY=5 "$RB" server --port 18517
wait_port "$NS_A" 18517
set +e
"${B[@]}" timeout 60 "$RB" bw "$IP_A" --port 18517 -t socket -s 4K -n 3 --op write --check \
  -f json -o "$TMP/bad.json" 2>"$TMP/bad.err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "corrupted bw --check exited 0"
json_check "$TMP/bad.json" "d['rows'][0]['wrong'] > 0"
grep -q "wrong" "$TMP/bad.err" || fail "no error naming the wrong messages: $(cat "$TMP/bad.err")"
pass "bw --check: #wrong 0 when clean, > 0 and exit $rc with the fault hook"

# Issue 22 items 2 and 10: sized for slow links. `bw -s 1M` with the automatic counts (20 windows
# of 64 x 1 MiB = 1.3 GB: ~56 s at 23.9 MB/s) runs what fits --max-time (default 10 s) after its
# warmup, flags the row "capped" and says so in the header.
t0=$(date +%s)
"${B[@]}" timeout 120 "$RB" bw "$IP_A" --port 18516 -t socket -e -s 1M -f json -o "$TMP/slow.json" ||
  fail "bw -s 1M on the shaped link"
t1=$(date +%s)
json_check "$TMP/slow.json" "1 <= d['rows'][0]['iterations'] < 20 and 'capped' in d['rows'][0].get('flags',[]) and d['rows'][0]['seconds'] <= 15 and d['run']['extra']['max_time_s']==10"
[ $((t1 - t0)) -lt 40 ] || fail "bw -s 1M took $((t1 - t0)) s on a 200 Mbit/s link (budget 10 s + warmup)"
# -D by the clock on a link whose rate is fixed: the measured time is SEC within 5% (+ one
# 64 KiB message, 2.7 ms), generous for a loaded host: 0.9..1.15 s.
"${B[@]}" timeout 60 "$RB" bw "$IP_A" --port 18516 -t socket -e --mode stream -s 64K -D 1 -f json -o "$TMP/dur.json" ||
  fail "bw -D 1 on the shaped link"
json_check "$TMP/dur.json" "0.9 <= d['rows'][0]['seconds'] <= 1.15"
pass "slow link: bw -s 1M capped by --max-time ($((t1 - t0)) s), -D 1 measured $(python3 -c "import json;print(json.load(open('$TMP/dur.json'))['rows'][0]['seconds'])") s"
