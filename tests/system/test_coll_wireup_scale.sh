# Wire-up at scale (the full measurement, up to 1024 ranks, is bench/wireup_scale.sh):
# `barrier --np 512` (event mode, more ranks than cores) completes within a bound, and the connections stay O(log N) per
# rank: rank 0 and every other rank hold at most 4 log2(N) + 8 sockets (one store connection,
# one listener while unconnected peers remain, one connection per peer; an O(N) design would
# hold hundreds), the store server one per rank (+ its own listener). A limit too low for the
# ranks (ulimit -n) is one line at once, not a hang.
source "$(dirname "$0")/lib.sh"

# 512, not 1024: 256 ranks per CPU cost what this host's context switches cost, and those vary
# with the host (on 2 vCPUs of a PVM guest, 2026-12-05: 12 s for 512 and 46-77 s for 1024 idle,
# where 1024 took 8 s on Dec 1; stop 41's CI, loaded, went past the 90 s bound at 1024). The
# socket bound still tells O(log N) (<= 44) from O(N) (hundreds). The time bound is 10x the idle
# figure: a hang guard, not a speed claim (bench/wireup_scale.sh measures the time).
N=512
LOG2=9
BOUND_S=120
start=$(date +%s%N)
timeout 240 python3 "$SRC/bench/wireup_sample.py" "$TMP/s.json" 0.2 -- \
  "$RB" barrier --np $N -n 1 --warmup 0 --use-event on --timeout 120 -f json -o "$TMP/r.json" \
  >"$TMP/out" 2>&1 || fail "barrier --np $N: $(tail -3 "$TMP/out")"
took=$((($(date +%s%N) - start) / 1000000))
cat "$TMP/s.json"
echo
[ "$took" -le $((BOUND_S * 1000)) ] || fail "barrier --np $N took $took ms (bound $BOUND_S s)"
json_check "$TMP/r.json" "d['run']['extra']['ranks']==$N and d['run']['extra']['peers_per_rank']<=2*$LOG2"
json_check "$TMP/s.json" "d['ranks_seen']==$N and 0<d['rank0_sockets']<=4*$LOG2+8 and 0<d['max_rank_sockets']<=4*$LOG2+8 and $N<=d['server_sockets']<=$N+4"
pass "barrier --np $N in $took ms; $(python3 -c "import json; d=json.load(open('$TMP/s.json')); print('sockets: rank 0 %d, any rank <= %d, store server %d' % (d['rank0_sockets'], d['max_rank_sockets'], d['server_sockets']))")"

# Descriptors: the store needs one per rank; a hard limit below that is refused before forking.
rc=0
(ulimit -n 200 && exec timeout 30 "$RB" barrier --np 256 -n 1) >"$TMP/lim.out" 2>"$TMP/lim.err" || rc=$?
[ "$rc" = 2 ] || fail "ulimit -n 200: exit $rc, expected 2: $(cat "$TMP/lim.err")"
[ "$(wc -l <"$TMP/lim.err")" = 1 ] || fail "ulimit -n 200: not one line: $(cat "$TMP/lim.err")"
grep -Eq "^rdmabench: error: --np 256: needs about 384 file descriptors \(one rendezvous connection per rank\) but the limit is 200 \(hard limit 200\); raise it \(ulimit -n 384\)" \
  "$TMP/lim.err" || fail "ulimit -n 200: $(cat "$TMP/lim.err")"
pass "ulimit -n 200 with --np 256: one line naming the limit, exit 2"
