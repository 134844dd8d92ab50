#!/usr/bin/env bash
# System test: the soft-RoCE VM harness (ci/rxe-vm) boots, rxe0 is an ACTIVE verbs port inside
# the VM, and a short perftest loopback (ib_send_lat) runs over it.
# Usage: bash tests/system/test_rxe_vm.sh <path-to-rdmabench-binary>   (env RDMABENCH_SOURCE_DIR)
# Exit 0 = pass, 1 = fail, 77 = SKIPPED (not root, or QEMU cannot be installed), as ctest expects.
set -u -o pipefail

SRC=${RDMABENCH_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM=$SRC/ci/rxe-vm
skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*"
  exit 1
}

[ -x "$VM" ] || fail "$VM not found or not executable"
[ "$(id -u)" -eq 0 ] || skip "not root (ci/rxe-vm prepare installs packages and QEMU needs the host root share)"

if ! out=$(timeout 1500 "$VM" prepare 2>&1); then
  echo "$out"
  if ! command -v qemu-system-x86_64 >/dev/null; then
    skip "qemu-system-x86_64 is not installed and could not be installed"
  fi
  fail "ci/rxe-vm prepare failed"
fi
echo "$out"
command -v ib_send_lat >/dev/null || fail "ib_send_lat (perftest) is not installed on the host"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. ibv_devinfo inside the VM: rxe0 with an ACTIVE port.
echo "== ci/rxe-vm run -- ibv_devinfo -d rxe0"
timeout 400 "$VM" run --timeout 120 -- ibv_devinfo -d rxe0 >"$tmp/devinfo" 2>"$tmp/devinfo.err"
rc=$?
cat "$tmp/devinfo" "$tmp/devinfo.err"
[ $rc -eq 0 ] || fail "ibv_devinfo in the VM exited with $rc"
grep -q 'hca_id:[[:space:]]*rxe0' "$tmp/devinfo" || fail "no hca_id rxe0 in ibv_devinfo output"
grep -q 'state:[[:space:]]*PORT_ACTIVE' "$tmp/devinfo" || fail "rxe0 port is not PORT_ACTIVE"
grep -q 'link_layer:[[:space:]]*Ethernet' "$tmp/devinfo" || fail "rxe0 link layer is not Ethernet"

# 2. ib_send_lat loopback on rxe0 (server in the background, client to the VM's own address).
echo "== ci/rxe-vm run -- ib_send_lat loopback"
timeout 400 "$VM" run --timeout 180 -- sh -c \
  'ib_send_lat -x "$RXE_GID_INDEX" -n 100 >/dev/null 2>&1 &
   i=0; until ss -ltn | grep -q ":18515 "; do   # the server listens: then the client starts
     i=$((i + 1)); [ $i -lt 1200 ] || { echo "ib_send_lat server never listened" >&2; exit 98; }
     sleep 0.1
   done
   ib_send_lat -x "$RXE_GID_INDEX" -n 100 "$RXE_IP"; rc=$?; wait; exit $rc' \
  >"$tmp/lat" 2>"$tmp/lat.err"
rc=$?
cat "$tmp/lat" "$tmp/lat.err"
[ $rc -eq 0 ] || fail "ib_send_lat loopback in the VM exited with $rc"
# A result row: "<bytes> <iterations> <t_min> ..." with 2 bytes and 100 iterations.
row=$(awk '$1 == 2 && $2 == 100 && NF >= 5' "$tmp/lat")
[ -n "$row" ] || fail "no ib_send_lat result row (2 bytes, 100 iterations)"
tmin=$(echo "$row" | awk '{print $3}')
awk -v t="$tmin" 'BEGIN { exit !(t > 0) }' || fail "t_min '$tmin' is not a positive number"

# 3. The harness passes exit statuses through, and the built binary runs on the emulated CPU
#    (same exit status of `rdmabench --help` as on the host).
BIN=${1:-}
if [ -n "$BIN" ] && [ -x "$BIN" ]; then
  "$BIN" --help >/dev/null 2>&1
  host_rc=$?
else
  BIN=/bin/true
  host_rc=0
fi
echo "== ci/rxe-vm run -- $BIN --help; exit 7"
timeout 400 "$VM" run --timeout 60 -q -- sh -c '"$0" --help >/dev/null 2>&1; echo "help-rc=$?"; exit 7' \
  "$BIN" >"$tmp/rc" 2>&1
rc=$?
cat "$tmp/rc"
[ $rc -eq 7 ] || fail "exit status 7 came back as $rc"
grep -qx "help-rc=$host_rc" "$tmp/rc" || fail "$BIN --help: exit status in the VM differs from the host's ($host_rc)"

echo "PASSED: rxe0 PORT_ACTIVE, ib_send_lat 2 B t_min ${tmin} us, exit status passed through"
