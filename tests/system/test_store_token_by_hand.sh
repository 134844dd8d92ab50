# Issue 36 item 2: who may join the store of ranks started by hand (--rank, rank 0 hosting the
# TCP store). Before, rank 0 without a token opened its store to anyone who reached the port.
#  1. Without --token / $RDMABENCH_TOKEN (and outside Slurm, PMIx, --np) rank 0 refuses to start:
#     one line naming --token, exit 2, also for a loopback --rendezvous (the store listens on
#     every address, and loopback is open to every user of the host) and for mpirun's ranks given
#     --rendezvous HOST:PORT.
#  2. With a token, a stranger's rank without it, or with another one, is refused at the hello
#     (one line, exit 1), and the run of the ranks that carry it goes on and succeeds.
#  3. --token '' opens the store on request: the run succeeds and rank 0 says once on stderr that
#     anyone who reaches the port can join.
# Loopback only, ~5 s.
source "$(dirname "$0")/lib.sh"
CLEAN=(env -u RDMABENCH_TOKEN -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_JOB_ID -u OMPI_COMM_WORLD_RANK
  -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE -u PMIX_RANK -u PMIX_NAMESPACE -u RDMABENCH_RUN_ID)
PORT=$((20000 + ($$ + 9011) % 20000))
B=(barrier --world-size 2 -t socket -n 5 --timeout 20)

# 1. No token: refused before anything listens.
want="--token: none given, and rank 0's rendezvous store (port $PORT) would let anyone who reaches it join the run"
for addr in "127.0.0.1:$PORT" "localhost:$PORT" "tcp://127.0.0.1:$PORT"; do
  expect_status 2 "$want" "${CLEAN[@]}" "$RB" "${B[@]}" --rank 0 --rendezvous "$addr"
  grep -q -- "--token T or RDMABENCH_TOKEN, or --token '' to accept anyone" "$TMP/err" ||
    fail "the refusal does not say what to do: $(cat "$TMP/err")"
done
expect_status 2 "$want" "${CLEAN[@]}" OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$RB" barrier \
  --rendezvous "127.0.0.1:$PORT" -t socket -n 5
pass "rank 0 without a token: one line naming --token, exit 2 (loopback and mpirun's ranks too)"

# 2. A token: strangers are refused at the hello, the ranks that carry it run.
run_rank0() {  # run_rank0 LABEL TOKEN_ARGS...: rank 0 in the background, PID in R0
  "${CLEAN[@]}" timeout 60 "$RB" "${B[@]}" --rank 0 --rendezvous "127.0.0.1:$PORT" "${@:2}" \
    >"$TMP/$1.0.out" 2>"$TMP/$1.0.err" &
  R0=$!
  CLEANUP+=("kill -9 $R0")
  wait_port "" "$PORT"
}
run_rank0 tok --token s3cret
expect_status 1 "access refused: this listener requires a token and the hello carried none" \
  "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 --rendezvous "127.0.0.1:$PORT"
expect_status 1 "access refused" "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 --rendezvous "127.0.0.1:$PORT" \
  --token guess
grep -q "s3cret\|guess" "$TMP/err" && fail "a token reached the refusal: $(cat "$TMP/err")"
"${CLEAN[@]}" RDMABENCH_TOKEN=s3cret timeout 60 "$RB" "${B[@]}" --rank 1 \
  --rendezvous "127.0.0.1:$PORT" >/dev/null 2>"$TMP/tok.1.err" || fail "rank 1 with the token: $(cat "$TMP/tok.1.err")"
wait "$R0" || fail "rank 0 with a token failed after the strangers: $(cat "$TMP/tok.0.err")"
[ ! -s "$TMP/tok.0.err" ] || fail "rank 0 with a token printed: $(cat "$TMP/tok.0.err")"
pass "a token: strangers without it refused at the hello (exit 1), the ranks with it run"

# 3. --token '': open on request, said once by rank 0.
run_rank0 open --token ''
"${CLEAN[@]}" timeout 60 "$RB" "${B[@]}" --rank 1 --rendezvous "127.0.0.1:$PORT" --token '' \
  >/dev/null 2>"$TMP/open.1.err" || fail "rank 1 --token '': $(cat "$TMP/open.1.err")"
wait "$R0" || fail "rank 0 --token '': $(cat "$TMP/open.0.err")"
[ "$(cat "$TMP/open.0.err")" = "rdmabench: warning: rank 0's rendezvous store on port $PORT takes no token (--token ''): anyone who reaches the port can join the run, read every rank's address and inject host names and results" ] ||
  fail "rank 0 --token '' stderr: $(cat "$TMP/open.0.err")"
[ ! -s "$TMP/open.1.err" ] || fail "rank 1 --token '' printed: $(cat "$TMP/open.1.err")"
pass "--token '': the run succeeds, rank 0 says once that anyone who reaches the port can join"
