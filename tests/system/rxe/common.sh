# Sourced by tests/system/test_rxe_*.sh (ctest system tests that boot the soft-RoCE VM).
# Sets SRC, VM, RB (the rdmabench binary), BUILD (its directory); defines fail/skip/pass.
# Skips (exit 77) only when not root; in CI (root) everything runs.
set -u -o pipefail
RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench}")
BUILD=$(dirname "$RB")
SRC=${RDMABENCH_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
VM=$SRC/ci/rxe-vm
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
pass() { echo "ok: $*"; }
[ "$(id -u)" -eq 0 ] || skip "not root (ci/rxe-vm needs root to prepare the VM kernel and packages)"
[ -x "$VM" ] || fail "$VM not found or not executable"
if ! out=$(timeout 1500 "$VM" prepare 2>&1); then
  echo "$out"
  fail "ci/rxe-vm prepare failed"
fi
T0=$(date +%s)
