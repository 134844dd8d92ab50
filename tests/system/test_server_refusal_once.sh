# `rdmabench server` refuses a bad first frame (unknown message type, wrong magic, another
# protocol version, a wrong --token) with exactly one Error frame, then closes: the refusal was
# sent twice (once by the handshake, once by the session's error report). Loopback, ~2 s.
source "$(dirname "$0")/lib.sh"
CC="python3 $SRC/tests/system/control_client.py"
PORT=$((20000 + ($$ + 7) % 20000))

"$RB" server -p "$PORT" --token right-token 2>"$TMP/server.log" &
SERVER_PID=$!
CLEANUP+=("kill -9 $SERVER_PID")
wait_port "" "$PORT"

check() {  # check CASE PATTERN
  local out n
  out=$($CC "$PORT" bad-hello "$1") || fail "$1: control client failed: $out"
  n=$(printf '%s\n' "$out" | grep -c '^error: ' || true)
  [ "$n" = 1 ] || fail "$1: $n Error frames (want 1): $out"
  printf '%s\n' "$out" | grep -q "^error: .*$2" || fail "$1: refusal does not say '$2': $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$1: more than the Error frame: $out"
}
check type "sent message type 999 instead of a hello"
check magic "wrong magic"
check version "protocol version mismatch: client .* speaks 99"
check token "token"
kill -0 "$SERVER_PID" 2>/dev/null || fail "server died: $(tail -5 "$TMP/server.log")"
pass "unknown type, wrong magic, protocol 99 and a wrong token: one Error frame each, then EOF"
