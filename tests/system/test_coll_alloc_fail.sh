# A rank that cannot allocate its buffers fails, and the others stop within the timeout naming it
# (scale-out issue). Three ranks started one by one with --rendezvous tcp://127.0.0.1:PORT; rank 1
# runs under an address-space limit (prlimit --as) that leaves room for the process but not for
# its message buffer (allreduce -s 32M: input, result and scratch, ~100 MB).
#  - rank 1: exit 1, one line naming the allocation: its size in bytes and what it is for;
#  - ranks 0 and 2: exit non-zero within --timeout + margin, one line naming rank 1 and why.
# Then the same for pairs (--bw-size 64M) with rank 2 limited, and allreduce over the file store
# (--rendezvous file:DIR; the failed rank's leave writes the store's failure file).
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}
command -v prlimit >/dev/null || fail "prlimit (util-linux) is missing"

TIMEOUT=5
# Address space of a rank that has joined and opened its device (VmPeak of rank 1 of 3 while it
# waits for the missing rank 2; both give up after --timeout 2), so the limit below is "this +
# 40 MiB" on any build or host; the buffers below need 64 MiB or more.
PORT=$((20000 + RANDOM % 20000))
"$RB" barrier --rank 0 --world-size 3 --rendezvous "127.0.0.1:$PORT" --timeout 2 >/dev/null 2>&1 &
P0=$!
CLEANUP+=("kill -9 $P0")
"$RB" barrier --rank 1 --world-size 3 --rendezvous "127.0.0.1:$PORT" --timeout 2 >/dev/null 2>&1 &
P1=$!
CLEANUP+=("kill -9 $P1")
peak=0
for i in $(seq 1 30); do
  v=$(awk '/^VmPeak:/ {print $2}' "/proc/$P1/status" 2>/dev/null || true)
  [ "${v:-0}" -gt "$peak" ] && peak=$v
  sleep 0.05
done
wait $P0 $P1 2>/dev/null || true
[ "$peak" -gt 10240 ] || fail "could not read the address space of a rank (VmPeak ${peak} KiB)"
LIMIT=$(((peak + 40 * 1024) * 1024))
pass "a rank's address space: $((peak / 1024)) MiB; the limited rank gets $((LIMIT >> 20)) MiB"

# run_case NAME LIMITED_RANK CMD...: three ranks of CMD; LIMITED_RANK under prlimit --as=LIMIT.
# Rendezvous: $RDV, else a fresh tcp://127.0.0.1:PORT (rank 0 hosts the store).
run_case() {
  local name=$1 bad=$2 r pids=() start took rc rdv
  shift 2
  rdv=${RDV:-tcp://127.0.0.1:$((20000 + RANDOM % 20000))}
  start=$(date +%s%N)
  for r in 0 1 2; do
    local pre=()
    [ "$r" = "$bad" ] && pre=(prlimit --as="$LIMIT")
    timeout 60 "${pre[@]}" "$RB" "$@" --rank "$r" --world-size 3 \
      --rendezvous "$rdv" --timeout "$TIMEOUT" >"$TMP/$name.$r.out" \
      2>"$TMP/$name.$r.err" &
    pids+=($!)
    CLEANUP+=("kill -9 $!")
  done
  for r in 0 1 2; do
    rc=0
    wait "${pids[$r]}" || rc=$?
    took=$((($(date +%s%N) - start) / 1000000))
    echo "$name rank $r: exit $rc after ${took} ms: $(cat "$TMP/$name.$r.err")"
    [ "$rc" != 0 ] || fail "$name: rank $r exited 0"
    [ "$rc" != 124 ] || fail "$name: rank $r hung (killed by timeout 60)"
    [ "$took" -le $(((TIMEOUT + 5) * 1000)) ] || fail "$name: rank $r took ${took} ms (--timeout $TIMEOUT)"
    [ "$(wc -l <"$TMP/$name.$r.err")" = 1 ] || fail "$name: rank $r: not one line: $(cat "$TMP/$name.$r.err")"
  done
}

# The failed rank names the buffer, its size in bytes and its purpose; the others name the rank.
check_named() {  # NAME BAD-RANK PURPOSE-REGEX
  local name=$1 bad=$2 purpose=$3 r
  grep -Eq "^rdmabench: error: rank $bad on .*: allocating the message buffer of [0-9]{8,} bytes \(data area [0-9]+ bytes for $purpose, control slots [0-9]+ bytes\): posix_memalign: Cannot allocate memory( \(during [a-z ]+\))?$" \
    "$TMP/$name.$bad.err" || fail "$name: rank $bad does not name its allocation: $(cat "$TMP/$name.$bad.err")"
  for r in 0 1 2; do
    [ "$r" = "$bad" ] && continue
    grep -Eq "^rdmabench: error: rank $r on .*rank $bad on host [^ ]+ failed: allocating the message buffer of [0-9]+ bytes" \
      "$TMP/$name.$r.err" || fail "$name: rank $r does not name rank $bad and why: $(cat "$TMP/$name.$r.err")"
  done
}

run_case allreduce 1 allreduce -s 32M -n 2 --warmup 0
check_named allreduce 1 "allreduce of up to 33554432 bytes per rank: input, result and scratch"
pass "allreduce: rank 1 cannot allocate; it names the buffer, ranks 0 and 2 name rank 1"

run_case pairs 2 pairs --bw-size 64M --bw-iters 1 -n 2
check_named pairs 2 "pairs \(--bw-size 67108864 bytes, --lat-size [0-9]+ bytes\)"
pass "pairs: rank 2 cannot allocate; it names the buffer, ranks 0 and 1 name rank 2"

RDV="file:$TMP/fstore" run_case file 2 allreduce -s 32M -n 2 --warmup 0 --run-id "alloc-$$"
check_named file 2 "allreduce of up to 33554432 bytes per rank: input, result and scratch"
pass "allreduce over file:DIR: rank 2 cannot allocate; ranks 0 and 1 name it"
