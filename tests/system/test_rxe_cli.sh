#!/usr/bin/env bash
# System test: the real CLI on soft-RoCE inside one VM (rxe0 loopback): every verbs op, sizes,
# event mode, rdma_cm, -q 4, errors, dead peer, Ctrl-C (tests/system/rxe/cli_verbs.sh) and
# -t ofi --provider "verbs;ofi_rxm" (tests/system/rxe/cli_ofi_rxm.sh), allreduce / barrier /
# ring -t verbs with --np (tests/system/rxe/cli_coll_verbs.sh), a black-holed data path named in
# the error (tests/system/rxe/blackhole.sh: the host kernel has no sch_prio), the verbs rows of
# the fault matrix (tests/system/rxe/fault_matrix_verbs.sh, docs/fault-matrix.md), in one VM
# boot.
# Usage: bash tests/system/test_rxe_cli.sh <path-to-rdmabench>
# Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/rxe/common.sh"
timeout 1200 "$VM" run --timeout 1080 -- bash -c \
  'bash "$0"/cli_verbs.sh "$1" && bash "$0"/cli_ofi_rxm.sh "$1" && bash "$0"/cli_coll_verbs.sh "$1" &&
   bash "$0"/blackhole.sh "$1" && bash "$0"/fault_matrix_verbs.sh "$1"' \
  "$SRC/tests/system/rxe" "$RB"
rc=$?
[ "$rc" -eq 0 ] || fail "CLI scripts in the VM exited with $rc"
pass "rdmabench CLI on rxe0: verbs, verbs;ofi_rxm, verbs collectives, black-holed data path, verbs fault matrix ($(($(date +%s) - T0)) s)"
