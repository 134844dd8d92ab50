# The standalone rendezvous store (`rdmabench rendezvous`) against a stranger (#12): a stranger
# storing many large keys is refused at its quota with the limit named, the store keeps serving a
# normal two-rank run while the stranger holds what it stored, and the same run id can be used
# again by a second run (before: "rank 0 joined twice"). Loopback only, ~10 s.
source "$(dirname "$0")/lib.sh"
PORT=$((20000 + ($$ + 5003) % 20000))

env -u RDMABENCH_TOKEN "$RB" rendezvous -p "$PORT" --token "" --conn-quota 2M 2>"$TMP/rdv.log" &
RDV=$!
CLEANUP+=("kill -9 $RDV")
wait_port "" "$PORT"

# 1. A stranger stores 400 x 64 KiB: refused at the 2 MiB per-connection quota, not silently.
python3 "$SRC/tests/system/store_stranger.py" "$PORT" 400 65536 15 >"$TMP/stranger.out" &
STRANGER=$!
CLEANUP+=("kill -9 $STRANGER")
for i in $(seq 1 100); do grep -q "^error\|^no refusal" "$TMP/stranger.out" && break; sleep 0.1; done
grep -q "^error: store quota exceeded: rank 0 holds [0-9]* bytes in the rendezvous (keys, values, buffers); storing 'junk/[0-9]*' (65[0-9]* bytes) would exceed the per-connection limit of 2097152 bytes$" \
  "$TMP/stranger.out" || fail "stranger's answer: $(cat "$TMP/stranger.out")"
stored=$(sed -n 's/^stored //p' "$TMP/stranger.out")
[ "$stored" -ge 28 ] && [ "$stored" -le 32 ] || fail "stranger stored $stored x 64 KiB under a 2 MiB quota"
grep -q "refused a set by rank 0 of run 'stranger' from 127.0.0.1:[0-9]*: store quota exceeded" "$TMP/rdv.log" ||
  fail "no log line for the refusal: $(cat "$TMP/rdv.log")"
kill -0 "$RDV" || fail "rendezvous died"
pass "stranger refused at the quota after $stored x 64 KiB"

# 2. A value above the cap is refused with the caps named.
out=$(python3 "$SRC/tests/system/store_stranger.py" "$PORT" 1 70000 0 other)
echo "$out" | grep -q "^error: set of 70010 bytes refused: the rendezvous store takes values of at most 65536 bytes and keys of at most 1024 bytes$" ||
  fail "oversize value: $out"
grep -q "refused a message of rank 0 from 127.0.0.1:[0-9]*: set of 70010 bytes refused" "$TMP/rdv.log" ||
  fail "no log line for the oversize value: $(tail -3 "$TMP/rdv.log")"
pass "a 70000-byte value is refused (cap 64 KiB)"

# 3. and 4. Two successive runs with the same run id, while the stranger still holds its keys.
run() {  # run LABEL: a two-rank allreduce through the standalone store, both ranks must exit 0
  local r pids=()
  for r in 0 1; do
    timeout 30 "$RB" allreduce --rank $r --world-size 2 --rendezvous "127.0.0.1:$PORT" \
      --standalone-rendezvous --run-id same -t socket -m 4:64 -n 5 --warmup 1 --timeout 10 \
      >"$TMP/$1.$r.out" 2>"$TMP/$1.$r.err" &
    pids+=($!)
  done
  for r in 0 1; do
    wait "${pids[$r]}" || fail "$1: rank $r failed: $(cat "$TMP/$1.$r.err")"
  done
}
run first
kill -0 "$STRANGER" || fail "the stranger was gone before the runs (its keys were not held)"
pass "a normal 2-rank run is served while the stranger holds its quota"
for i in $(seq 1 50); do [ "$(grep -c "run 'same' finished (2 of 2 ranks joined): freed" "$TMP/rdv.log")" -ge 1 ] && break; sleep 0.1; done
grep -q "run 'same' finished (2 of 2 ranks joined): freed [0-9]* keys" "$TMP/rdv.log" ||
  fail "the first run was not collected: $(tail -5 "$TMP/rdv.log")"
run second
grep -q "joined twice" "$TMP"/second.*.err && fail "second run refused: $(cat "$TMP"/second.*.err)"
for i in $(seq 1 50); do [ "$(grep -c "run 'same' finished" "$TMP/rdv.log")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c "run 'same' finished (2 of 2 ranks joined)" "$TMP/rdv.log")" = 2 ] ||
  fail "runs collected: $(grep "finished" "$TMP/rdv.log")"
pass "a second run with the same run id is served (each run's keys freed when it ends)"
kill -0 "$RDV" || fail "rendezvous died"

# 4. Access control: a store started with a token admits only ranks that carry it; a stranger's
# rank without it (or with another) is refused at the hello, naming neither token.
TPORT=$((20000 + ($$ + 7011) % 20000))
RDMABENCH_TOKEN=job-secret "$RB" rendezvous -p "$TPORT" 2>"$TMP/rdvt.log" &
CLEANUP+=("kill -9 $!")
wait_port "" "$TPORT"
B1=(barrier --rank 0 --world-size 1 --rendezvous "127.0.0.1:$TPORT" --standalone-rendezvous -n 5 --timeout 5)
expect_status 1 "access refused: this listener requires a token and the hello carried none" env -u RDMABENCH_TOKEN "$RB" "${B1[@]}"
expect_status 1 "access refused" env -u RDMABENCH_TOKEN "$RB" "${B1[@]}" --token other
grep -q "job-secret\|other" "$TMP/rdvt.log" && fail "a token reached the log: $(cat "$TMP/rdvt.log")"
RDMABENCH_TOKEN=job-secret timeout 30 "$RB" "${B1[@]}" >/dev/null || fail "the job's own rank was refused"
pass "token: strangers refused at the hello, the job's rank admitted"

# 5. Who may join by default (#36). A standalone store does not start without a token unless
# asked to accept anyone (--token ''): before, it admitted any process that reached its port.
expect_status 2 "--token: none given, and a store without one lets anyone who reaches the port join" \
  env -u RDMABENCH_TOKEN -u SLURM_JOB_ID "$RB" rendezvous -p 0
# The --np launcher gives its ranks a random token: a stranger on the host who finds the store's
# port (ss) is refused at the hello, and the ranks run.
"$RB" barrier --np 2 -n 2000000 --timeout 60 >"$TMP/np.out" 2>"$TMP/np.err" &
NP=$!
CLEANUP+=("kill -9 $NP")
np_port=""
for _ in $(seq 1 100); do
  np_port=$(ss -ltnpH 2>/dev/null | grep "pid=$NP," | awk '{print $4}' | sed 's/.*://' | head -1 || true)
  [ -n "$np_port" ] && break
  sleep 0.1
done
[ -n "$np_port" ] || fail "--np launcher: no listening store port found (ss)"
answer=$(python3 - "$np_port" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
hello = b"RDMB" + struct.pack("<HH", 2, 0) + b"stranger"
s.sendall(struct.pack("<IHH", len(hello), 1, 0) + hello)
h = s.recv(8, socket.MSG_WAITALL)
n, t, _ = struct.unpack("<IHH", h)
body = s.recv(n, socket.MSG_WAITALL) if n else b""
print("type %d: %s" % (t, body.decode(errors="replace")))
PY
)
echo "$answer" | grep -q "^type 3: access refused: this listener requires a token" ||
  fail "a stranger on the --np store's port got: $answer"
kill "$NP" 2>/dev/null || true
wait "$NP" 2>/dev/null || true
timeout 60 "$RB" allreduce --np 2 -s 8 -n 10 >/dev/null || fail "--np 2 with its own token"
pass "default access: a standalone store needs a token (or --token ''); --np refuses a stranger"
