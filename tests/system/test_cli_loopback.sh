# The README's main job and the CLI contract on loopback: tables, JSON (parsed), CSV, info,
# and one-line errors for bad input.
source "$(dirname "$0")/lib.sh"

# Main job: `rdmabench lat` with no arguments (embedded default, loopback, best transport).
timeout 120 "$RB" lat -n 200 --warmup 10 >"$TMP/lat.txt" 2>"$TMP/lat.err" || fail "rdmabench lat: $(cat "$TMP/lat.err")"
grep -q "t_typical" "$TMP/lat.txt" || fail "no latency header: $(cat "$TMP/lat.txt")"
grep -qE "^ *65536 " "$TMP/lat.txt" || fail "default sweep does not reach 64K"
pass "rdmabench lat (loopback default)"

timeout 60 "$RB" lat -t socket -s 64 -n 500 -f json -o "$TMP/lat.json" || fail "lat json"
json_check "$TMP/lat.json" "d['run']['transport']=='socket' and len(d['rows'])==1 and d['rows'][0]['bytes']==64 and d['rows'][0]['iterations']==500 and 0 < d['rows'][0]['latency_us']['min'] <= d['rows'][0]['latency_us']['median'] <= d['rows'][0]['latency_us']['max'] and 'command_line' in str(d)"
pass "lat --format json"

timeout 60 "$RB" bw -t socket -m 1K:64K -n 20 -f json >"$TMP/bw.json" || fail "bw json"
json_check "$TMP/bw.json" "[r['bytes'] for r in d['rows']]==[1024,2048,4096,8192,16384,32768,65536] and all(r['mb_per_s']>0 and r['msg_per_s']>0 for r in d['rows'])"
pass "bw --format json"

timeout 60 "$RB" bw -t socket -s 64K -n 10 --bidir -f csv >"$TMP/bw.csv" || fail "bw csv"
python3 - "$TMP/bw.csv" <<'PY' || fail "csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 2, rows
assert len(rows[0]) == len(rows[1]), rows
PY
pass "bw --bidir --format csv"

timeout 60 "$RB" lat -t socket -s 4K -n 100 --op write >/dev/null || fail "write latency (emulated)"
timeout 60 "$RB" lat -t socket -s 4K -n 100 --op read >/dev/null || fail "read latency (emulated)"
timeout 60 "$RB" bw -t socket -s 4K -n 10 --op write -q 2 >/dev/null || fail "write bw, 2 connections"
timeout 60 "$RB" lat -t socket -s 1K -n 100 --check >/dev/null || fail "lat --check"
timeout 60 "$RB" lat -t socket -s 1K -D 0.3 >/dev/null || fail "lat -D"
pass "ops, --qp, --check, -D"

# --post-list where a batch is not one doorbell: accepted, and the header says what a batch is
# (socket read: requests in one sendmsg, answered one by one by the target); -l 1: no note.
timeout 60 "$RB" bw -t socket --op read -l 8 -s 1K -n 4 -f json >"$TMP/bwl.json" || fail "bw --op read -l 8"
json_check "$TMP/bwl.json" "d['run']['extra']['post_list']==8 and 'socket read is emulated' in d['run']['extra']['post_list_note'] and len(d['rows'])==1"
timeout 60 "$RB" bw -t socket -l 8 -s 1K -n 4 -f json >"$TMP/bwl.json" || fail "bw -l 8"
json_check "$TMP/bwl.json" "'one sendmsg' in d['run']['extra']['post_list_note']"
timeout 60 "$RB" bw -t socket --op read -s 1K -n 4 -f json >"$TMP/bwl.json" || fail "bw --op read"
json_check "$TMP/bwl.json" "'post_list_note' not in d['run']['extra'] and 'post_list' not in d['run']['extra']"
pass "bw --post-list: post_list_note where a batch is not one doorbell"
# Stream mode with a post list completes once per list unless --cq-mod says otherwise (perftest
# -l sets -Q to the list size); without a list, min(100, --tx-depth) as perftest -Q.
timeout 60 "$RB" bw -t socket --mode stream -l 32 -s 8 -n 3200 -f json >"$TMP/bwq.json" || fail "bw stream -l 32"
json_check "$TMP/bwq.json" "d['run']['extra']['cq_moderation'] == 32"
timeout 60 "$RB" bw -t socket --mode stream -l 32 --cq-mod 64 -s 8 -n 3200 -f json >"$TMP/bwq.json" || fail "bw stream -l 32 --cq-mod 64"
json_check "$TMP/bwq.json" "d['run']['extra']['cq_moderation'] == 64"
timeout 60 "$RB" bw -t socket --mode stream -s 8 -n 3200 -f json >"$TMP/bwq.json" || fail "bw stream"
json_check "$TMP/bwq.json" "d['run']['extra']['cq_moderation'] == 100"
pass "bw --mode stream: --cq-mod defaults to the post list size (perftest -l), else 100"

# The standalone server times bw's target interval (peer_BW): it takes --clock as clients do.
expect_status 2 "--clock hpet: unknown clock (valid: auto, tsc, monotonic)" "$RB" server --clock hpet
SPORT=$((20000 + ($$ + 37) % 20000))
background "$RB" server -p "$SPORT" --bind 127.0.0.1 --quiet --clock monotonic
wait_port "" "$SPORT"
timeout 60 "$RB" bw 127.0.0.1 -p "$SPORT" -t socket -s 4K -n 4 -f json >"$TMP/sclk.json" || fail "bw against server --clock monotonic"
json_check "$TMP/sclk.json" "d['rows'][0]['peer_mb_per_s'] > 0"
pass "server --clock"

# A window above the receiver's queue is refused when the devices open, before any connection
# (it was found at the first size): the message names the side and its device.
expect_status 2 "--window 2000: needs 2001 posted receives (the window and a control message), above the receive queue depth 512 of the server socket device lo (raise --rx-depth or lower --window to 511)" "$RB" bw -t socket -w 2000 -s 8 -n 2
# Bidirectional: both sides refuse the same value; said once (issue 35 item 13), not "X (here: X)".
expect_status 2 "--window 2000: needs 2001 posted receives" "$RB" bw -t socket -b -w 2000 -s 8 -n 2
"$RB" bw -t socket -b -w 2000 -s 8 -n 2 2>&1 | grep -q "(here: " && fail "bw -b -w 2000: the refusal said twice"
pass "bw --window above the receive queue: refused at device open"

# ci/install-deps.sh waits for a dpkg lock held by another apt-get (DPkg::Lock::Timeout) instead
# of failing at once: run it against stub id/dpkg-query/apt-get that record the arguments.
SRC=${RDMABENCH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$TMP/stub"
printf '#!/bin/sh\necho 0\n' >"$TMP/stub/id"
printf '#!/bin/sh\nexit 1\n' >"$TMP/stub/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$TMP/apt.args" >"$TMP/stub/apt-get"
chmod +x "$TMP/stub/"*
PATH="$TMP/stub:$PATH" bash "$SRC/ci/install-deps.sh" >/dev/null ||
  fail "install-deps.sh with stubs"
[ "$(grep -c -- "-o DPkg::Lock::Timeout=300" "$TMP/apt.args")" = 2 ] ||
  fail "install-deps.sh: apt-get without the lock timeout: $(cat "$TMP/apt.args")"
pass "install-deps.sh waits for the dpkg lock"

timeout 30 "$RB" info >"$TMP/info.txt" || fail "info"
grep -q "^socket *usable" "$TMP/info.txt" || fail "info lacks usable socket: $(cat "$TMP/info.txt")"
timeout 30 "$RB" info --format json >"$TMP/info.json" || fail "info json"
json_check "$TMP/info.json" "any(t.get('transport')=='socket' and t['usable'] for t in d) and len([t for t in d if 'transport' in t])==3 and any(t.get('collective')=='sharp' for t in d) and d[-1]['summary']['default_transport'] in ('socket','verbs') and 'socket' in d[-1]['summary']['usable']"
# Each libfabric domain names each of its fabrics once (fi_getinfo repeats them per variant).
json_check "$TMP/info.json" "[len(dm['fabrics'])==len(set(dm['fabrics'])) for t in d if t.get('transport')=='ofi' for p in t['details']['providers'] for dm in p['domains']].count(False)==0 and len([1 for t in d if t.get('transport')=='ofi' for p in t['details']['providers']])>0"
pass "info"

expect_error "--iters 0: out of range" "$RB" lat -n 0
expect_error "MIN 10 is larger than MAX 2" "$RB" lat -m 10:2
expect_error "--transport foo" "$RB" lat -t foo
expect_error "--size" "$RB" lat -s 3G
expect_error "unknown option '--nope' for 'bw'" "$RB" bw --nope
expect_error "unknown command" "$RB" frobnicate
expect_error "cannot resolve host" "$RB" lat no-such-host.invalid -t socket
# The word after a bare -e became HOST: the error says so (`lat -e maybe`).
expect_status 2 "cannot resolve host 'no-such-host.invalid': " "$RB" lat -e no-such-host.invalid -t socket -s 8
grep -qF "(HOST 'no-such-host.invalid' is the word after -e, which takes only on, off or yield:" "$TMP/err" ||
  fail "lat -e HOST: no hint: $(cat "$TMP/err")"
grep -q "word after -e" < <("$RB" lat no-such-host.invalid -e -t socket -s 8 2>&1) && fail "hint without -e HOST"
pass "bad input: one-line errors"

# A closed stdout is not reused by a socket (the report went into the peer's connection before:
# "malformed frame header (reserved bytes not zero)").
# The run measures; its report is lost, which is an error (issue 36 item 8): exit 1 with one line
# naming stdout, and never a frame error from the peer.
for cmd in "lat -t socket -s 8 -n 10" "allreduce --np 2 -t socket -s 8 -n 10"; do
  rc=0
  # shellcheck disable=SC2086
  timeout 60 "$RB" $cmd >&- 2>"$TMP/closed.err" || rc=$?
  [ "$rc" = 1 ] || fail "$cmd with stdout closed: exit $rc: $(cat "$TMP/closed.err")"
  grep -q "writing the report to stdout: Bad file descriptor" "$TMP/closed.err" ||
    fail "$cmd with stdout closed: $(cat "$TMP/closed.err")"
  ! grep -qi "malformed\|frame" "$TMP/closed.err" || fail "$cmd: the report reached the peer"
done
pass "stdout closed: the run measures, the lost report is exit 1 naming stdout, nothing reaches the peer"

# Without -t, an option the chosen transport does not read is refused (ofi never is the default;
# on a host without a usable RDMA device the default is socket, which reads no -d).
expect_status 2 "--provider tcp: only for -t ofi, not for the transport chosen without -t (auto: " \
  "$RB" lat -s 8 -n 10 --provider tcp
info=$("$RB" info 2>/dev/null || true)
if grep -q "^verbs *unusable" <<<"$info"; then
  expect_status 2 "-d/--device mlx5_0: only for -t verbs or -t ofi, not for the transport chosen without -t (auto: socket" \
    "$RB" lat -s 8 -d mlx5_0 -x 9999 -n 100
fi
pass "without -t: --provider / -d the chosen transport does not read are refused"

# A usage error with -f json / csv still prints the error document on stdout (docs/cli.md);
# with -o FILE the file is not created; table prints the error on stderr only.
rc=0; "$RB" bw -s 8 -w 0 -f json >"$TMP/ue.json" 2>"$TMP/ue.err" || rc=$?
[ "$rc" = 2 ] || fail "bw -w 0 -f json: exit $rc"
python3 - "$TMP/ue.json" <<'PY' || fail "bw -w 0 -f json stdout: $(head -c 400 "$TMP/ue.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if doc["error"] == "--window 0: out of range 1..4096" and doc["rows"] == [] else 1)
PY
"$RB" lat -m 0:8G -f csv >"$TMP/ue.csv" 2>/dev/null && fail "lat -m 0:8G: exit 0"
tail -1 "$TMP/ue.csv" | grep -q ',-m/--msg-sizes 0:8G: MAX ' || fail "lat -m 0:8G -f csv: $(cat "$TMP/ue.csv")"
"$RB" bw -s 8 -w 0 -f json -o "$TMP/ue-file.json" >"$TMP/ue2.out" 2>/dev/null && fail "bw -w 0 -o: exit 0"
[ ! -e "$TMP/ue-file.json" ] && [ ! -s "$TMP/ue2.out" ] || fail "bw -w 0 -f json -o FILE wrote a report"
[ -z "$("$RB" bw -s 8 -w 0 2>/dev/null)" ] || fail "bw -w 0 (table) printed on stdout"
pass "usage errors: the error document on stdout with -f json / csv, nothing with -o FILE or table"

# Newcomer trial: usage errors that were silent, and `version -f json`.
expect_status 2 "--output '': empty file name" "$RB" lat -t socket -s 8 -o ''
expect_status 2 "--full: adds OSU's -f columns and applies only to --format osu" "$RB" bw -t socket --full
expect_status 2 "--np 1: ring measures each rank's ping-pong with its neighbour and needs at least 2" \
  "$RB" ring --np 1 -t socket
expect_status 2 "the same file" "$RB" pairs --np 2 -o "$TMP/p.svg" --plot "$TMP/./p.svg"
expect_status 2 "--size 2: below one float32 element (4 B): nothing to reduce" "$RB" allreduce --np 2 -s 2
"$RB" version -f json >"$TMP/v.json" || fail "version -f json"
json_check "$TMP/v.json" "d['tool']=='rdmabench' and d['build_options']['RDMABENCH_WITH_OFI'] in ('ON','OFF') and any(b['name']=='socket' and b['built'] for b in d['backends'])"
timeout 60 "$RB" allreduce --np 2 -t socket -s 6,8 -n 3 -f json -o "$TMP/ar6.json" 2>"$TMP/ar6.err" || fail "allreduce -s 6,8: $(cat "$TMP/ar6.err")"
json_check "$TMP/ar6.json" "[r['bytes'] for r in d['rows']]==[4,8]"
grep -q "rounded down to 6 -> 4 (count = size / 4, as osu_allreduce)" "$TMP/ar6.err" || fail "no rounding warning: $(cat "$TMP/ar6.err")"
pass "-o '', --full without osu, ring --np 1, --plot over -o, sub-element allreduce sizes; version -f json"
