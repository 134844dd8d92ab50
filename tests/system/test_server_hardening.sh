# `rdmabench server` against the second round of hostile clients (issue 24): silent connections
# that used to lock everyone out, a client naming another host/port as its data-path address, a
# session allocating past --max-bytes, a client stopped mid-run, a short client --timeout behind
# a running test, and libfabric variables sizing the provider's pools. Loopback only; ~90 s.
source "$(dirname "$0")/lib.sh"
CC="python3 $SRC/tests/system/control_client.py"
PORT=$((20000 + $$ % 20000))

start_server() {  # start_server LOGNAME [server options...]; sets SERVER_PID and LOG
  LOG=$1; shift
  "$RB" server -p "$PORT" "$@" 2>"$TMP/$LOG" &
  SERVER_PID=$!
  CLEANUP+=("kill -9 $SERVER_PID")
  wait_port "" "$PORT"
}
stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
alive() { kill -0 "$SERVER_PID" 2>/dev/null || fail "server died ($1): $(tail -5 "$TMP/$LOG")"; }
normal_client() {  # normal_client LABEL [options]: a default client must succeed
  local label=$1; shift
  timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 --warmup 10 "$@" \
    >"$TMP/ok.txt" 2>"$TMP/ok.err" || fail "normal client after '$label': $(cat "$TMP/ok.err")"
}
# Peak VmHWM (kB) of the server's session processes, sampled every 50 ms while PID runs.
sample_sessions() {  # sample_sessions PID OUTFILE
  local pid=$1 out=$2 peak=0 c v
  while kill -0 "$pid" 2>/dev/null; do
    for c in $(pgrep -P "$SERVER_PID" || true); do
      v=$(awk '/^VmHWM:/ {print $2}' "/proc/$c/status" 2>/dev/null || echo 0)
      [ "${v:-0}" -gt "$peak" ] && peak=$v
    done
    sleep 0.05
  done
  echo "$peak" >"$out"
}

# 1. Silent connections do not count against --max-connections, with or without a token: 80
# idle connections (re-opened whenever the server closes one) and 20 clients, one after another,
# all served. Before, 64 of them left "server busy: 64 connections in progress" for everyone.
for mode in open token; do
  if [ $mode = token ]; then
    start_server "flood-$mode.log" --token s3cret
    export RDMABENCH_TOKEN=s3cret
  else
    start_server "flood-$mode.log"
    unset RDMABENCH_TOKEN
  fi
  $CC "$PORT" idle-flood "80 300" >"$TMP/flood.out" 2>&1 &
  flood=$!
  CLEANUP+=("kill $flood")
  for i in $(seq 1 100); do grep -q "connections open" "$TMP/flood.out" && break; sleep 0.1; done
  grep -q "flood: 80 connections open" "$TMP/flood.out" || fail "flood did not open 80 connections: $(cat "$TMP/flood.out")"
  served=0 failed=""
  for i in $(seq 1 20); do
    if timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 --warmup 10 >/dev/null 2>"$TMP/c$i.err"; then
      served=$((served + 1))
    else
      failed+="client $i: $(head -2 "$TMP/c$i.err" | tr '\n' ' '); "
    fi
  done
  # The silent connections are dropped 2 s after their accept: 20 clients on an idle host are
  # served sooner than that, so wait for the first drop before the flood goes.
  wait_for "$TMP/$LOG" "dropped 127\.0\.0\.1:[0-9]+ before its hello" "" 20
  kill "$flood" 2>/dev/null || true
  wait "$flood" 2>/dev/null || true
  alive "idle flood ($mode)"
  [ "$served" = 20 ] || fail "$mode: $served of 20 clients served beside 80 idle connections; $failed server log: $(grep -v ' listening on ' "$TMP/$LOG" | tail -3)"
  grep -q "dropped 127.0.0.1:[0-9]* before its hello" "$TMP/$LOG" ||
    fail "$mode: no silent connection was ever dropped: $(tail -3 "$TMP/$LOG")"
  stop_server
  pass "$mode server: 20 of 20 clients served beside 80 idle connections (silent ones dropped at the hello deadline)"
done
unset RDMABENCH_TOKEN

start_server main.log --max-bytes 64M --max-timeout 6

# 2. A client advertising another host/port as its data-path address (device id 0, so that the
# server would be the connecting side) gets an error, and our listener there receives nothing.
python3 - "$TMP/trap" <<'PY' &
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
# A port below the ephemeral range, so our address sorts before the server's (whose data port
# is ephemeral) even on the tie of the device ids: the server must refuse to connect.
import random
for p in random.sample(range(10000, 20000), 200):
    try:
        l.bind(("127.0.0.1", p)); break
    except OSError:
        pass
l.listen(16); l.settimeout(0.2)
open(sys.argv[1] + ".port", "w").write(str(l.getsockname()[1]))
got, end = 0, time.time() + 25
while time.time() < end and not __import__("os").path.exists(sys.argv[1] + ".stop"):
    try:
        c, _ = l.accept(); got += 1; c.close()
    except socket.timeout:
        pass
open(sys.argv[1] + ".count", "w").write(str(got))
PY
trap_pid=$!
for i in $(seq 1 50); do [ -s "$TMP/trap.port" ] && break; sleep 0.1; done
trap_port=$(cat "$TMP/trap.port")
out=$($CC "$PORT" hostile-address "127.0.0.1 $trap_port" || true)
touch "$TMP/trap.stop"
wait "$trap_pid"
[ "$(cat "$TMP/trap.count")" = 0 ] || fail "the server connected to our listener $(cat "$TMP/trap.count") time(s); client saw: $out"
echo "$out" | grep -q "^error: .*would make this side connect to it; this server only accepts data-path connections" ||
  fail "hostile address answered: $out"
alive "hostile address"
normal_client "hostile address"
pass "a client naming 127.0.0.1:$trap_port as its address is refused; nothing connected there"

# 2b. The server's --max-bytes refusal comes before the client allocates the buffers of its
# largest size (-s 1G: 2 GiB): a client that could not allocate them (ulimit -v) hears only the
# refusal.
rc=0
(ulimit -v 400000; timeout 60 "$RB" bw 127.0.0.1 -p "$PORT" -t socket -s 1G -n 2) \
  >/dev/null 2>"$TMP/big.err" || rc=$?
[ "$rc" != 0 ] || fail "bw -s 1G ran beside the server's --max-bytes 64M"
grep -q "above the server's --max-bytes" "$TMP/big.err" ||
  fail "no refusal from the server: $(cat "$TMP/big.err")"
# Before, the refusal came with the client's own failure appended: "(here: allocate 2147487744
# bytes: Cannot allocate memory)".
! grep -q "allocate [0-9]* bytes" "$TMP/big.err" ||
  fail "the client allocated before the server's refusal: $(cat "$TMP/big.err")"
alive "refusal before allocation"
pass "the server's --max-bytes refusal reaches the client before it allocates 2 GiB"

# 3. An allocation no check foresaw (test hook: 1 GiB in the session) fails inside the session
# at its memory limit, in one line to the client; the daemon serves on.
stop_server
RDMABENCH_TEST_SESSION_ALLOC_MIB=1024 start_server alloc.log --max-bytes 64M
if timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 >/dev/null 2>"$TMP/alloc.err"; then
  fail "a session allocating 1 GiB beside --max-bytes 64M ran"
fi
grep -q "server: session memory limit ([0-9]* MiB from --max-bytes) reached" "$TMP/alloc.err" ||
  fail "allocation past the limit answered: $(cat "$TMP/alloc.err")"
[ "$(wc -l <"$TMP/alloc.err")" -le 2 ] || fail "more than one error line: $(cat "$TMP/alloc.err")"
alive "allocation past the limit"
pass "allocation past the session memory limit: $(grep -o 'server: session memory limit.*reached' "$TMP/alloc.err")"
stop_server

start_server main.log --max-bytes 64M --max-timeout 6

# 4. A client stopped (SIGSTOP) past the server's --max-timeout and continued reports the
# server's timeout, not a data-path EOF; meanwhile the busy-polling server session backs off
# instead of spinning a core (CPU of the session over 3 s of the stall).
timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -D 30 --timeout 30 >/dev/null 2>"$TMP/stop.err" &
client=$!
for i in $(seq 1 100); do grep -q ": lat socket send from" "$TMP/$LOG" && break; sleep 0.1; done
sleep 1
rbclient=$(pgrep -P "$client")  # rdmabench itself, under timeout(1)
[ -n "$rbclient" ] || fail "client not running: $(cat "$TMP/stop.err")"
kill -STOP "$rbclient"
sleep 2  # > Progress::kBackoffAfterNs: the session has backed off
sess=$(pgrep -P "$SERVER_PID" | head -1)
[ -n "$sess" ] || fail "no server session while the client is stopped"
t0=$(awk '{print $14 + $15}' "/proc/$sess/stat")
sleep 3
t1=$(awk '{print $14 + $15}' "/proc/$sess/stat" 2>/dev/null || echo "$t0")
ticks=$(getconf CLK_TCK)
cpu=$(python3 -c "print(round(100.0 * ($t1 - $t0) / $ticks / 3, 1))")
sleep 3  # past --max-timeout 6: the server gives up and reports its timeout
kill -CONT "$rbclient"
rc=0; wait "$client" || rc=$?
[ "$rc" = 3 ] || fail "continued client exit status $rc (want 3, a timeout): $(cat "$TMP/stop.err")"
grep -q "reported: .*no progress for 6.0 s" "$TMP/stop.err" ||
  fail "continued client did not report the server's timeout: $(cat "$TMP/stop.err")"
python3 -c "import sys; sys.exit(0 if $cpu < 25 else 1)" ||
  fail "the server session used ${cpu}% of a core while its client was stopped"
alive "stopped client"
pass "stopped client reports the server's timeout (exit 3); stalled session used ${cpu}% of a core"

# 5. A client whose --timeout (1 s) is shorter than the server's busy grace (1.5 s), behind a
# running test, is told "server busy", not that the server never opened its device. The running
# test holds the slot 4 s at connect (test hook), whatever the machine's load.
stop_server
RDMABENCH_TEST_HOLD=connect RDMABENCH_TEST_HOLD_MS=4000 start_server hold.log --max-timeout 6
timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 --timeout 30 >/dev/null 2>"$TMP/long.err" &
long=$!
for i in $(seq 1 100); do grep -q "holding at connect" "$TMP/$LOG" && break; sleep 0.1; done
grep -q "holding at connect" "$TMP/$LOG" || fail "the long test never held: $(cat "$TMP/long.err")"
if timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 --timeout 1 >/dev/null 2>"$TMP/busy.err"; then
  fail "second client ran while a test was running"
fi
grep -q "server busy: running lat over socket" "$TMP/busy.err" || fail "short --timeout behind a test: $(cat "$TMP/busy.err")"
wait "$long" || fail "the running test failed: $(cat "$TMP/long.err")"
pass "--timeout 1 behind a running test: $(grep -o 'server busy: running lat over socket' "$TMP/busy.err")"
stop_server
start_server main.log --max-bytes 64M --max-timeout 6

# 6. libfabric variables from a client cannot size the provider's pools past --max-bytes:
# FI_OFI_RXM_BUFFER_SIZE=1048576 x FI_OFI_RXM_RX_SIZE=2048 (4.1 GB before) is refused in one
# line, and the server's sessions stay small meanwhile (VmHWM from /proc).
"$RB" info --format json >"$TMP/info.json" 2>/dev/null || fail "info"
if ! python3 - "$TMP/info.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
ofi = [t for t in d if t.get("transport") == "ofi" and t["usable"]]
sys.exit(0 if ofi and any(p["provider"] == "tcp;ofi_rxm" for p in ofi[0]["details"]["providers"]) else 1)
PY
  skip "libfabric provider tcp;ofi_rxm not usable here (sections 1-5 passed)"
fi
for env in '{"FI_OFI_RXM_BUFFER_SIZE": "1048576", "FI_OFI_RXM_RX_SIZE": "2048"}' \
           '{"FI_OFI_RXM_BUFFER_SIZE": "4194304", "FI_OFI_RXM_RX_SIZE": "1024"}'; do
  $CC "$PORT" provider-env "$env" >"$TMP/env.out" 2>&1 &
  attack=$!
  sample_sessions "$attack" "$TMP/peak" &
  sampler=$!
  wait "$attack" || true
  wait "$sampler"
  out=$(cat "$TMP/env.out")
  echo "$out" | grep -q "^error: usage: provider_env from .*FI_OFI_RXM_BUFFER_SIZE=.* size ofi_rxm's bounce buffers to [0-9]* bytes .* above the server's --max-bytes 67108864" ||
    fail "provider_env $env answered: $out"
  peak=$(cat "$TMP/peak")
  [ "$peak" -lt 262144 ] || fail "a server session reached VmHWM ${peak} kB during provider_env $env"
  alive "provider_env $env"
  seen="session VmHWM peak ${peak} kB"
  [ "$peak" = 0 ] && seen="no session lived long enough for a 50 ms sample"
  pass "provider_env $env refused in one line; $seen (bound 256 MiB)"
done
out=$($CC "$PORT" provider-env '{"FI_OFI_RXM_NOT_A_KNOB": "1"}' || true)
echo "$out" | grep -q "^error: usage: provider_env from .*FI_OFI_RXM_NOT_A_KNOB is not one of the libfabric variables this server adopts" ||
  fail "unknown variable answered: $out"
pass "an unknown FI_OFI_RXM_ variable is refused, naming it"
# Legitimate tunings still run end to end: within libfabric's default pools under --max-bytes
# 64M (below the defaults' 71 MB), and a larger eager limit under the default --max-bytes 1G.
FI_OFI_RXM_EAGER_LIMIT=8192 FI_OFI_RXM_USE_RNDV_WRITE=1 timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t ofi --provider "tcp;ofi_rxm" --device lo -s 64 -n 50 >/dev/null 2>"$TMP/ofi.err" ||
  fail "FI_OFI_RXM_EAGER_LIMIT=8192 FI_OFI_RXM_USE_RNDV_WRITE=1 refused: $(cat "$TMP/ofi.err")"
stop_server
start_server big.log
FI_OFI_RXM_EAGER_LIMIT=131072 timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t ofi --provider "tcp;ofi_rxm" --device lo -s 64 -n 50 >/dev/null 2>"$TMP/ofi.err" ||
  fail "FI_OFI_RXM_EAGER_LIMIT=131072 refused under --max-bytes 1G: $(cat "$TMP/ofi.err")"
pass "legitimate tunings still run (EAGER_LIMIT=8192 + USE_RNDV_WRITE=1 under 64M; EAGER_LIMIT=131072 under 1G)"
