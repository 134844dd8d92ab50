#!/usr/bin/env bash
# `rdmabench check` on soft-RoCE in one VM boot (tests/system/rxe/check_verbs.sh): a clean run
# within the clean link's own counter spread, netem loss (error counters named, exit 1), a
# regression against a recorded baseline (and too few runs judging nothing), the budget on busy
# vCPUs, a link down.
# NOT IN CTEST (not named test_*.sh). Run on a quiet host 2026-12-05: the two calibration runs
# and the clean run passed (lat p50 13.7 us, p99 185-611 us, 54 MB/s; rxe's own retries on a
# clean link: completer_retry_err +117, duplicate_request +3103..3573 per 14 s), then the loss
# case failed: exit 0, the counters unmoved. rxe sends a packet whose destination MAC is its own
# netdev's straight to its receive path (rxe_loopback), past every qdisc, so netem on veth0 or lo
# cannot drop or delay check's one-port loopback traffic; the loss and regression known answers
# need the traffic on a wire: two VMs (ci/rxe-vm pair) and a check that measures against a peer
# (a --peer option, not built). Earlier note: on the shared 2-core host at load 20-29 the TCG guest ran
# rxe loopback ~200x slower than unloaded (lat p50 3.7 ms, p99 44 ms; the bandwidth run did not
# finish in its 22 s share), so the known answers could not be seen to pass here. Rename to
# tests/system/test_rxe_check.sh once it passes on the CI machine.
# Usage: bash tests/system/rxe/run_check_vm.sh <path-to-rdmabench>
# Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/common.sh"
timeout 700 "$VM" run --timeout 600 -- bash "$SRC/tests/system/rxe/check_verbs.sh" "$RB"
rc=$?
[ "$rc" -eq 0 ] || fail "check_verbs.sh in the VM exited with $rc"
pass "rdmabench check on rxe0: clean, loss, regression, budget, link down ($(($(date +%s) - T0)) s)"
