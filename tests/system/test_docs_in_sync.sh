# Drift guard: docs/cli.md's option tables must be exactly what `rdmabench help --markdown`
# generates from the parsers' own option descriptions (tools/gen-docs.sh --check). Fails with
# the diff; `tools/gen-docs.sh BUILD/rdmabench` regenerates them.
source "$(dirname "$0")/lib.sh"
"$SRC/tools/gen-docs.sh" --check "$RB" >"$TMP/out" 2>&1 || fail "docs/cli.md drifted: $(head -c 3000 "$TMP/out")"
# Every command with options has its block (gen-docs refuses a missing one; count them too).
n=$(grep -c '^<!-- BEGIN GENERATED: ' "$SRC/docs/cli.md")
[ "$n" -ge 12 ] || fail "docs/cli.md has $n generated blocks, expected one per command (>= 12)"
# `rdmabench help CMD` is CMD's help, not the command list.
"$RB" help lat >"$TMP/help_lat" || fail "rdmabench help lat failed"
"$RB" lat --help >"$TMP/lat_help"
cmp -s "$TMP/help_lat" "$TMP/lat_help" || fail "rdmabench help lat differs from rdmabench lat --help"
grep -q '^Usage: rdmabench lat \[HOST\]' "$TMP/help_lat" || fail "help lat: $(head -3 "$TMP/help_lat")"
# Typos: one line, exit 2, a suggestion.
expect_status 2 "unknown option '--sise' for 'lat'; did you mean '--size'?" "$RB" lat --sise 8
expect_status 2 "unknown command 'alreduce'; did you mean 'allreduce'?" "$RB" alreduce
expect_status 2 "rdmabench: error: help: unknown command 'lta'; did you mean 'lat'?" "$RB" help lta
expect_status 2 "unknown command 'latency'; did you mean 'lat'?" "$RB" latency
# README and bw --help agree on what -f perftest does to --mode: nothing (the default is window).
bw_help=$("$RB" bw --help | tr -s ' \n' '  ')
[[ $bw_help == *"f perftest does not change it (default window)"* ]] ||
  fail "bw --help no longer says -f perftest leaves --mode alone: update this check and README.md"
! grep -qi "default with \`--format perftest\`" "$SRC/README.md" ||
  fail "README.md says --mode stream is the default with --format perftest; bw keeps window"
grep -q "\`--format perftest\` changes the output and, without \`-n\`, the counts" "$SRC/README.md" ||
  fail "README.md does not say --format perftest leaves bw's --mode alone"
pass "README: --format perftest leaves bw --mode window (as bw --help says)"
# The exit-status table: the daemons exit 0 on SIGINT / SIGTERM (their normal stop), and say so.
dport=$((20000 + ($$ + 11) % 20000))
for sig in INT TERM; do
  for daemon in server rendezvous; do
    open=()  # a standalone store starts without a token only when asked to
    [ "$daemon" = rendezvous ] && open=(--token "")
    # A non-interactive shell starts background jobs with SIGINT ignored, which rdmabench keeps.
    env --default-signal=INT "$RB" "$daemon" -p "$dport" "${open[@]}" 2>"$TMP/daemon.err" &
    dpid=$!
    wait_port "" "$dport"
    kill -"$sig" "$dpid"
    rc=0; wait "$dpid" || rc=$?
    [ "$rc" = 0 ] || fail "$daemon after SIG$sig: exit $rc: $(cat "$TMP/daemon.err")"
  done
done
grep -q '^| 0 | success | also `rdmabench server` and `rdmabench rendezvous` stopped by Ctrl-C' "$SRC/docs/cli.md" ||
  fail "docs/cli.md's exit-status table does not say the daemons exit 0 on Ctrl-C / SIGTERM"
pass "server and rendezvous exit 0 on SIGINT / SIGTERM, as docs/cli.md's exit-status table says"
pass "docs/cli.md matches the generated tables ($n blocks); help CMD; did-you-mean"
