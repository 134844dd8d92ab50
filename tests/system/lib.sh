# Shared helpers for the system tests (sourced). Each test script is called by ctest as
#   bash tests/system/test_X.sh /path/to/rdmabench
# Exit 0 = pass, 77 = SKIPPED (the reason is printed), anything else = fail.
set -euo pipefail

RB=${1:?usage: $0 /path/to/rdmabench}
RB=$(readlink -f "$RB")
SRC=${RDMABENCH_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TMP=$(mktemp -d /tmp/rdmabench-systest.XXXXXX)
CLEANUP=()
cleanup() {
  local i
  for ((i = ${#CLEANUP[@]} - 1; i >= 0; i--)); do eval "${CLEANUP[$i]}" >/dev/null 2>&1 || true; done
  [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIPPED: $*"; exit 77; }
pass() { echo "ok: $*"; }

# Netns hosts are root-only; CI runs as root so nothing is skipped there.
need_root() {
  if [ "$(id -u)" != 0 ]; then
    [ "${CI:-}" = true ] && fail "CI must run as root (netns hosts)"
    skip "needs root for network namespaces"
  fi
  command -v ip >/dev/null || fail "iproute2 (ip) is missing"
}

# Two hosts joined by a veth pair: $NS_A ($IP_A) and $NS_B ($IP_B). Private /24 inside our own
# namespaces only: traffic never leaves them.
netns_pair() {
  local id=$$
  NS_A=rbA$id NS_B=rbB$id IP_A=10.77.$((id % 200)).1 IP_B=10.77.$((id % 200)).2
  ip netns add "$NS_A"; CLEANUP+=("ip netns del $NS_A")
  ip netns add "$NS_B"; CLEANUP+=("ip netns del $NS_B")
  ip link add "va$id" type veth peer name "vb$id"
  ip link set "va$id" netns "$NS_A"
  ip link set "vb$id" netns "$NS_B"
  ip -n "$NS_A" addr add "$IP_A/24" dev "va$id"
  ip -n "$NS_B" addr add "$IP_B/24" dev "vb$id"
  for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
  ip -n "$NS_A" link set "va$id" up
  ip -n "$NS_B" link set "vb$id" up
}

# netns_bridge N NET NAME HOSTIF PORTIF: N hosts on one bridge, for ranks on separate hosts.
# The bridge br0 lives in its own namespace $BR (NAME"Br"PID); host k (1..N) is namespace
# NAME"H"k.PID, joined to br0 by the veth HOSTIF k.PID (in the host, address NET.k/24) and
# PORTIF k.PID (the bridge port). Sets BR and HOSTS (host k = ${HOSTS[k-1]}); everything is
# removed on exit. Private addresses inside our own namespaces only.
netns_bridge() {
  local n=$1 net=$2 name=$3 hif=$4 pif=$5 id=$$ k ns
  BR=${name}Br$id
  ip netns add "$BR"; CLEANUP+=("ip netns del $BR")
  ip -n "$BR" link add br0 type bridge
  ip -n "$BR" link set br0 up
  HOSTS=()
  for k in $(seq 1 "$n"); do
    ns=${name}H$k.$id
    ip netns add "$ns"; CLEANUP+=("ip netns del $ns")
    ip link add "$hif$k.$id" type veth peer name "$pif$k.$id"
    ip link set "$hif$k.$id" netns "$ns"
    ip link set "$pif$k.$id" netns "$BR"
    ip -n "$BR" link set "$pif$k.$id" master br0
    ip -n "$BR" link set "$pif$k.$id" up
    ip -n "$ns" addr add "$net.$k/24" dev "$hif$k.$id"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$hif$k.$id" up
    HOSTS+=("$ns")
  done
}

# Starts a background command, registers it for cleanup, sets $BG_PID.
background() {
  "$@" &
  BG_PID=$!
  CLEANUP+=("kill -9 $BG_PID")
}

# Waits until TCP port $2 accepts connections in netns $1 (or on this host if $1 is empty).
wait_port() {
  local ns=$1 port=$2 i
  for i in $(seq 1 100); do
    if [ -n "$ns" ]; then
      ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && return 0
    else
      bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && return 0
    fi
    sleep 0.05
  done
  fail "nothing listens on port $port${ns:+ in $ns}"
}

# wait_for FILE REGEX [PID] [SECONDS]: waits until a line of FILE matches the extended REGEX
# (a marker: the first result row, a log line), at most SECONDS (default 120, far above any
# healthy start). Fails naming the file and the marker, or at once when PID has exited.
wait_for() {
  local file=$1 re=$2 pid=${3:-} secs=${4:-120} i
  for ((i = 0; i < secs * 20; i++)); do
    grep -qE -- "$re" "$file" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      grep -qE -- "$re" "$file" 2>/dev/null && return 0
      fail "process $pid ended before '$re' appeared in $file: $(tail -3 "$file" 2>/dev/null)"
    fi
    sleep 0.05
  done
  fail "no line matching '$re' in $file after ${secs}s: $(tail -3 "$file" 2>/dev/null)"
}

# json_check FILE PYTHON-EXPR: parses FILE with a real JSON parser and asserts the expression
# (variable d holds the document).
json_check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
expr = sys.argv[2]
if not eval(expr):
    sys.exit("JSON check failed: " + expr + "\n" + json.dumps(d)[:2000])
PY
}

# expect_error EXPECTED_SUBSTRING CMD...: the command must fail with exactly one stderr line
# containing the substring, within 30 s.
expect_error() {
  local want=$1; shift
  local rc=0
  timeout 30 "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" != 0 ] || fail "expected failure: $*"
  [ "$rc" != 124 ] || fail "hung (killed by timeout): $*"
  grep -qF -- "$want" "$TMP/err" || fail "stderr of '$*' lacks '$want': $(cat "$TMP/err")"
  [ "$(wc -l <"$TMP/err")" = 1 ] || fail "expected one error line from '$*', got: $(cat "$TMP/err")"
  LAST_RC=$rc
}

# expect_status STATUS EXPECTED_SUBSTRING CMD...: expect_error, and the exit status must be
# STATUS (docs/cli.md: 1 failure, 2 usage, 3 timeout, 4 interrupted).
expect_status() {
  local want_rc=$1; shift
  expect_error "$@"
  [ "$LAST_RC" = "$want_rc" ] || fail "exit status $LAST_RC, expected $want_rc: ${*:2}"
}

# The --np launcher folds identical stderr lines of several ranks into one
# "rdmabench: error: ranks 0-1,3 on HOST: ..." (lib/launch/fold.h); one rank keeps "rank N on".
# expand_ranks LIST: "0-1,3" -> 0 1 3, one per line.
expand_ranks() {
  echo "$1" | tr ',' '\n' | awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'
}
# error_ranks FILE [ERE]: the ranks named by FILE's error lines (folded or not) that match ERE,
# ascending and space-separated ("0 1 3"); a rank named by two lines appears twice.
error_ranks() {
  local l
  grep -E "^rdmabench: error: ranks? [0-9,-]+ on " "$1" | grep -E -- "${2:-.}" | while IFS= read -r l; do
    expand_ranks "$(echo "$l" | sed -E 's/^rdmabench: error: ranks? ([0-9,-]+) on .*/\1/')"
  done | sort -n | tr '\n' ' ' | sed 's/ $//'
}
# error_line FILE RANK: the error line(s) of FILE that name RANK (folded or not).
error_line() {
  local l
  grep -E "^rdmabench: error: ranks? [0-9,-]+ on " "$1" | while IFS= read -r l; do
    expand_ranks "$(echo "$l" | sed -E 's/^rdmabench: error: ranks? ([0-9,-]+) on .*/\1/')" | grep -qx "$2" && echo "$l"
  done
  return 0
}
# unfold_errors FILE: FILE's lines with every folded error line written out once per rank
# ("ranks 0-1 on H: X" -> "rank 0 on H: X" and "rank 1 on H: X"), for per-rank regexes.
# Pipe it into `grep -E RE >/dev/null`, never `grep -q`: -q exits at the first match, this loop
# then dies of SIGPIPE and pipefail fails the test (a race that depends on the load).
unfold_errors() {
  local l r
  while IFS= read -r l; do
    if [[ $l =~ ^rdmabench:\ error:\ ranks\ ([0-9,-]+)\ on\ (.*)$ ]]; then
      for r in $(expand_ranks "${BASH_REMATCH[1]}"); do echo "rdmabench: error: rank $r on ${BASH_REMATCH[2]}"; done
    else
      echo "$l"
    fi
  done <"$1"
}
