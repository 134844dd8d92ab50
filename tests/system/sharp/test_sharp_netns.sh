# --algo sharp across four netns hosts on a bridge (one rank each, explicit --rank /
# --world-size / --rendezvous), with the stand-in libsharp_coll: barrier and checked allreduce;
# then one host's SHARP init fails and every host exits within the timeout naming it.
source "$(dirname "$0")/../lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}
need_root
[ -f "${RDMABENCH_SHARP_LIBRARY:-}" ] || fail "RDMABENCH_SHARP_LIBRARY must name the stand-in libsharp_coll.so"
export RDMABENCH_SHARP_LIBRARY
unset SHARP_STANDIN_FAIL SHARP_STANDIN_FAIL_RANK SHARP_STANDIN_FAIL_AFTER

id=$$
NET=10.79.$((id % 200))
netns_bridge 4 "$NET" sharp sh sp

# run_all NAME ENV -- CMD...: rank k-1 in host k (ENV applies to every host), rendezvous at host 1.
run_all() {
  local name=$1 envs=() port=$((20000 + RANDOM % 20000)) pids=() k rc=0
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  for k in 1 2 3 4; do
    ip netns exec "${HOSTS[$((k - 1))]}" env "${envs[@]}" timeout 60 "$RB" "$@" --rank $((k - 1)) \
      --world-size 4 --rendezvous "$NET.1:$port" --run-id "$name" --use-event on \
      >"$TMP/$name.$k.out" 2>"$TMP/$name.$k.err" &
    pids+=($!)
  done
  for k in 1 2 3 4; do wait "${pids[$((k - 1))]}" || rc=$?; done
  return $rc
}

run_all bar -- barrier --algo sharp -n 100 --warmup 5 -f json || fail "barrier --algo sharp: $(cat "$TMP"/bar.*.err)"
json_check "$TMP/bar.1.out" "d['rows'][0]['collective']['algorithm']=='sharp' and d['run']['extra']['ranks']==4"
run_all ar -- allreduce --algo sharp -m 8:256K -n 5 --warmup 1 --check -f json ||
  fail "allreduce --algo sharp: $(cat "$TMP"/ar.*.err)"
json_check "$TMP/ar.1.out" "len(d['rows'])==16 and d['run']['extra']['ranks']==4 and all(r['collective']['wrong']==0 for r in d['rows'])"
pass "4 netns hosts: barrier and checked allreduce through the stand-in"

start=$(date +%s)
rc=0
run_all bad SHARP_STANDIN_FAIL=init SHARP_STANDIN_FAIL_RANK=2 -- allreduce --algo sharp -s 8 -n 5 --timeout 3 || rc=$?
took=$(($(date +%s) - start))
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "init failing on host 3: rc $rc"
[ "$took" -le 15 ] || fail "init failing on host 3: took ${took}s"
grep -q "sharp_coll_init: Cannot connect to SHARPD / Aggregation Manager (-8)" "$TMP/bad.3.err" || fail "host 3: $(cat "$TMP/bad.3.err")"
# The others name rank 2 (the store's news) or the out-of-band collective it broke.
for k in 1 2 4; do
  grep -Eq "rank 2 on host .* failed: sharp_coll_init|sharp_coll_init: Out-of-band collective failed \(-15\); out-of-band: " "$TMP/bad.$k.err" ||
    fail "host $k does not say why: $(cat "$TMP/bad.$k.err")"
done
pass "SHARP init failing on one host: all 4 exit in ${took}s, each with one line of cause"
