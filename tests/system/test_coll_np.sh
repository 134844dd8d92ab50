# Collectives from the CLI with --np (forked local ranks): barrier, every allreduce algorithm
# with data checks, the ring ping-pong, the report formats, and a rank killed mid-run: the
# others must exit within the timeout naming it.
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}

for algo in tree ring rd rabenseifner auto; do
  timeout 120 "$RB" allreduce --np 5 --algo "$algo" -m 4:64K -n 5 --warmup 1 --check \
    -f json -o "$TMP/ar_$algo.json" || fail "allreduce --algo $algo"
  json_check "$TMP/ar_$algo.json" "len(d['rows'])==15 and all(r['collective']['wrong']==0 and r['collective']['ranks']==5 for r in d['rows'])"
done
pass "allreduce: every algorithm, 5 ranks, checked"

timeout 60 "$RB" allreduce --np 4 --algo auto -s 1M -n 3 --warmup 1 -f json -o "$TMP/auto.json" || fail "auto"
json_check "$TMP/auto.json" "'model' in d['run']['extra'] and d['run']['extra']['model']['alpha_us']>0"
pass "auto prints its model"

timeout 60 "$RB" barrier --np 3 -n 50 --warmup 5 -f osu >"$TMP/b.osu" || fail "barrier osu"
grep -q "^# Avg Latency(us)" "$TMP/b.osu" || fail "osu barrier header: $(cat "$TMP/b.osu")"
timeout 60 "$RB" allreduce --np 3 -m 4:16 -n 5 -f imb >"$TMP/a.imb" || fail "allreduce imb"
grep -q "t_min\[usec\]" "$TMP/a.imb" && grep -q "#processes = 3" "$TMP/a.imb" || fail "imb: $(cat "$TMP/a.imb")"
timeout 60 "$RB" allreduce --np 2 -m 4:16 -n 5 -f osu --full >"$TMP/a.osu" || fail "allreduce osu"
grep -Eq "^# Size +Avg Latency\(us\) +Min Latency\(us\) +Max Latency\(us\) +Iterations$" "$TMP/a.osu" || fail "osu -f header: $(cat "$TMP/a.osu")"
timeout 60 "$RB" allreduce --np 2 -m 4:16 -n 5 -f csv >"$TMP/a.csv" || fail "csv"
python3 -c "import csv,sys; r=list(csv.DictReader(open('$TMP/a.csv'))); assert len(r)==3 and r[0]['t_avg_us'], r" || fail "csv rows"
pass "barrier / allreduce in osu, imb and csv layouts"

timeout 60 "$RB" ring --np 4 -n 200 --warmup 20 -f json -o "$TMP/ring.json" || fail "ring"
json_check "$TMP/ring.json" "len(d['rows'])==8 and [r['link']['median_us'] for r in d['rows']]==sorted(r['link']['median_us'] for r in d['rows'])"
pass "ring: 8 directed links sorted fastest first"

# A rank killed mid-run: every other rank exits within the timeout naming it.
# Killed after the first result row (4 B done; up to 1 MiB x 3000 runs for minutes), not a sleep.
timeout 120 "$RB" allreduce --np 4 -m 4:1M -n 3000 --timeout 5 -f csv >"$TMP/k.out" 2>"$TMP/k.err" &
LAUNCHER=$!
for i in $(seq 1 100); do
  [ "$(pgrep -P "$LAUNCHER" | wc -l)" -ge 1 ] && break
  sleep 0.05
done
RBPID=$(pgrep -P "$LAUNCHER" -x rdmabench | head -1)
for i in $(seq 1 100); do
  [ "$(pgrep -P "$RBPID" | wc -l)" = 4 ] && break
  sleep 0.05
done
wait_for "$TMP/k.out" '^allreduce,socket,[^,]*,false,false,0,4,3000,[0-9]' "$LAUNCHER"
VICTIM=$(pgrep -P "$RBPID" | sed -n 3p)
[ -n "$VICTIM" ] || fail "no rank processes found"
start=$(date +%s)
kill -9 "$VICTIM"
rc=0
wait "$LAUNCHER" || rc=$?
took=$(($(date +%s) - start))
[ "$rc" != 0 ] || fail "killed rank not noticed"
[ "$rc" != 124 ] || fail "ranks hung after a rank was killed"
[ "$took" -le 30 ] || fail "took ${took}s to notice a dead rank (--timeout 5)"
[ "$(error_ranks "$TMP/k.err")" = "0 1 3" ] || fail "expected errors of ranks 0, 1, 3: $(cat "$TMP/k.err")"
grep -q "rank 2 on host .* died" "$TMP/k.err" || fail "errors do not name rank 2: $(cat "$TMP/k.err")"
pass "killed rank 2 named by the others after ${took}s"

# A rank that never arrives: explicit ranks 0 and 1 of 3 time out naming rank 2.
PORT=$((20000 + RANDOM % 12000))
timeout 30 "$RB" barrier --rank 0 --world-size 3 --rendezvous 127.0.0.1:$PORT --timeout 2 -n 5 >/dev/null 2>"$TMP/m0.err" &
P0=$!
timeout 30 "$RB" barrier --rank 1 --world-size 3 --rendezvous 127.0.0.1:$PORT --timeout 2 -n 5 >/dev/null 2>"$TMP/m1.err" || true
wait $P0 || true
grep -q "missing rank(s): 2 (never arrived)" "$TMP/m1.err" || fail "rank 1: $(cat "$TMP/m1.err")"
[ "$(wc -l <"$TMP/m1.err")" = 1 ] || fail "more than one line: $(cat "$TMP/m1.err")"
pass "a rank that never arrives is named"

expect_error "--algo bogus" "$RB" allreduce --np 2 --algo bogus
expect_error "--format perftest" "$RB" barrier --np 2 -f perftest
pass "usage errors"

# Placement per rank (#10): --cpu gives each local rank one CPU of the list; the header lists
# every rank's CPUs and warns when a host has more ranks than CPUs (whatever bound them).
CPUS=$(python3 -c "import os; print(','.join(map(str, sorted(os.sched_getaffinity(0))[:2])))")
if [ "$(echo "$CPUS" | tr ',' '\n' | wc -l)" = 2 ]; then
  timeout 60 "$RB" allreduce --np 2 --cpu "$CPUS" -s 8 -n 20 -f json -o "$TMP/pl.json" || fail "--cpu $CPUS"
  json_check "$TMP/pl.json" "[r['cpus'] for r in d['run']['placement']['ranks']]=='$CPUS'.split(',') and 'warning' not in d['run']['placement'] and 'local rank 1 of 2' in d['run']['placement']['ranks'][1]['source']"
  pass "--cpu $CPUS with --np 2: one CPU per rank, in the header, no warning"
fi
ONE=${CPUS%%,*}
timeout 60 "$RB" barrier --np 3 --cpu "$ONE" -n 20 -f json -o "$TMP/pl3.json" || fail "--cpu $ONE --np 3"
json_check "$TMP/pl3.json" "[r['cpus'] for r in d['run']['placement']['ranks']]==['$ONE']*3 and d['run']['placement']['warning'].startswith('3 ranks on ') and 'run on 1 CPU ($ONE)' in d['run']['placement']['warning']"
timeout 60 taskset -c "$ONE" "$RB" barrier --np 2 -n 20 >"$TMP/pl.txt" || fail "under taskset"
grep -q "^# WARNING: 2 ranks on .* run on 1 CPU ($ONE)" "$TMP/pl.txt" && grep -q "inherited binding (launcher/taskset) kept" "$TMP/pl.txt" ||
  fail "taskset binding not kept or not warned: $(cat "$TMP/pl.txt")"
pass "oversubscription warned (--cpu with fewer CPUs than ranks; a launcher's binding, kept)"
expect_status 2 "--cpu 3-1: not a CPU list" "$RB" allreduce --np 2 --cpu 3-1

# A rank that fails before it connects (rank 2 of 4 gets CPU 99) ends the others' connects at
# once through the store, naming it, not after --timeout (they waited the whole 20 s before).
start=$(date +%s%N)
rc=0
timeout 60 "$RB" barrier --np 4 --cpu "0,0,99,0" --timeout 20 -n 5 >/dev/null 2>"$TMP/early.err" || rc=$?
took=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 2 ] || fail "rank failing before connect: exit $rc, expected 2: $(cat "$TMP/early.err")"
[ "$took" -lt 10000 ] || fail "peers of a rank that failed before connecting took $took ms (--timeout 20)"
[ "$(error_ranks "$TMP/early.err")" = "0 1 2 3" ] || fail "expected one error per rank: $(cat "$TMP/early.err")"
[ "$(error_ranks "$TMP/early.err" '--cpu 99: not within the CPUs allowed here')" = "0 1 2 3" ] ||
  fail "not every line names the cause: $(cat "$TMP/early.err")"
pass "a rank failing before it connects stops the others in $took ms (--timeout 20), each naming it"

# A terminal's Ctrl-C reaches the whole process group (launcher and every rank; for `lat` without
# a host, the client and its forked loopback server): the status is 4, every time (it was 130
# under --np: the launcher's SIGTERM after the SIGINT counted as a second Ctrl-C; and 1 at random
# for loopback `lat`: the loopback server raced the client with "server interrupted").
ctrl_c() {  # NAME MARKER-REGEX CMD...: SIGINT to the group after the first row, expect 4
  local name=$1 marker=$2 rc=0 i
  shift 2
  setsid env --default-signal=INT "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  local pid=$!
  CLEANUP+=("kill -9 -- -$pid")
  wait_for "$TMP/$name.out" "$marker" "$pid" 60
  kill -INT -- -"$pid"
  for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "$name: still running 30 s after Ctrl-C"
  wait "$pid" || rc=$?
  [ "$rc" = 4 ] || fail "$name: Ctrl-C to the process group gave exit $rc, expected 4: $(cat "$TMP/$name.err")"
}
for i in 1 2; do
  ctrl_c np$i '^ +8 ' "$RB" allreduce --np 4 -m 8:16 -n 100000
  ctrl_c lat$i '^ +0 ' "$RB" lat -m 0:4M -n 20000 --warmup 10
done
pass "Ctrl-C to the process group: exit 4 (allreduce --np 4 and loopback lat, twice each)"
