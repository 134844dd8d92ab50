#!/usr/bin/env bash
# A peer whose control port answers but whose data path is black-holed (issue #13), inside the
# rxe VM (the host kernel has no sch_prio / act_gact): two netns hosts on a veth pair; the
# client's egress drops every TCP segment except those to the server's control port. For
# socket and tcp;ofi_rxm, `lat` and `bw` must both fail with the timeout status (3) and name
# the data-path address that did not answer, not only the control port.
# Usage (inside the VM): bash blackhole.sh /path/to/rdmabench
set -u -o pipefail
RB=$1
fail() { echo "FAIL: $*"; exit 1; }
id=$$
A=rbha$id B=rbhb$id
TMP=$(mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
  ip netns del "$A" 2>/dev/null
  ip netns del "$B" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
T0=$(date +%s)
ip netns add "$A" && ip netns add "$B" || fail "ip netns add"
ip link add "ha$id" netns "$A" type veth peer name "hb$id" netns "$B" || fail "veth"
ip -n "$A" addr add 10.76.0.1/24 dev "ha$id"
ip -n "$B" addr add 10.76.0.2/24 dev "hb$id"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "ha$id" up && ip -n "$B" link set "hb$id" up || fail "veth up"
ip netns exec "$A" "$RB" server --bind 10.76.0.1 --port 18610 --quiet 2>"$TMP/server.err" &
SERVER=$!
i=0
until ip netns exec "$A" ss -ltn | grep -q '10.76.0.1:18610 '; do
  i=$((i + 1)); [ $i -lt 300 ] || fail "server never listened: $(cat "$TMP/server.err")"
  sleep 0.1
done
# Control port passes (prio 1), every other TCP segment from the client is dropped (prio 2).
tc -n "$B" qdisc add dev "hb$id" root handle 1: prio || fail "tc prio"
tc -n "$B" filter add dev "hb$id" parent 1: prio 1 protocol ip u32 match ip protocol 6 0xff \
  match ip dport 18610 0xffff action ok || fail "tc filter (control port)"
tc -n "$B" filter add dev "hb$id" parent 1: prio 2 protocol ip u32 match ip protocol 6 0xff \
  action drop || fail "tc filter (drop)"

for t in socket ofi; do
  for test in lat bw; do
    rc=0
    ip netns exec "$B" timeout 60 "$RB" "$test" 10.76.0.1 -p 18610 -t "$t" -s 8 -n 10 \
      --timeout 5 --connect-timeout 5 >/dev/null 2>"$TMP/err" || rc=$?
    err=$(cat "$TMP/err")
    [ "$rc" = 3 ] || fail "$test -t $t with a black-holed data path: exit $rc, expected 3 (timeout): $err"
    if [ "$t" = socket ]; then
      # The data connection's address: the server's address with a port other than control's.
      echo "$err" | grep -Eq 'peer 10\.76\.0\.1:[0-9]+' && ! echo "$err" | grep -q 'peer 10.76.0.1:18610 ' ||
        fail "$test -t socket: the error does not name the data-path address: $err"
    else
      echo "$err" | grep -Eq 'data path fi_sockaddr_in://10\.76\.0\.[12]:[0-9]+' ||
        fail "$test -t ofi: the error does not name the data-path address: $err"
    fi
    echo "ok: $test -t $t, black-holed data path: exit 3, $err"
  done
done
echo "PASSED: black-holed data path named by lat and bw, socket and tcp;ofi_rxm ($(($(date +%s) - T0)) s)"
