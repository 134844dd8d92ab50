# Options that a command would accept and silently ignore are one-line usage errors (exit 2)
# naming the option as typed: a transport option -t does not read (lat, bw and every N-rank
# command), --gbits / --full where the chosen report has no place for them (issue 13), and a
# size above the limit named as typed ("--size 3G", not its bytes). docs/cli.md.
source "$(dirname "$0")/lib.sh"

# -t names a transport that does not read the option.
expect_status 2 "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it" \
  "$RB" lat -t socket -s 8 -n 10 -d mlx5_0
expect_status 2 "--remote-device mlx5_1: only for -t verbs or -t ofi; -t socket does not use it" \
  "$RB" bw -t socket -s 8 -n 10 --remote-device mlx5_1
expect_status 2 "-x/--gid-index 3: only for -t verbs; -t socket does not use it" \
  "$RB" bw -t socket -s 8 -n 10 -x 3
for c in barrier allreduce ring pairs congestion; do
  expect_status 2 "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it" \
    "$RB" "$c" --np 2 -t socket -d mlx5_0
  expect_status 2 "--ib-port 2: only for -t verbs; -t socket does not use it" \
    "$RB" "$c" --np 2 -t socket --ib-port 2
done
expect_status 2 "--provider tcp: only for -t ofi; -t socket does not use it" \
  "$RB" allreduce --np 2 -t socket --provider tcp
pass "-t socket with -d / --remote-device / -x / --ib-port / --provider: refused (lat, bw, N-rank)"

# Without -t, the N-rank commands check the same options against the automatic choice, as
# lat / bw do (ofi is never the automatic choice, so --provider is always refused there).
for c in barrier allreduce ring pairs congestion; do
  extra=(); [ "$c" = congestion ] && extra=(--victims 0.5)  # 2 victims and 2 aggressors
  expect_status 2 "--provider tcp: only for -t ofi, not for the transport chosen without -t (auto: " \
    "$RB" "$c" --np 4 "${extra[@]}" --provider tcp
done
if grep -q "^verbs *unusable" <<<"$("$RB" info 2>/dev/null || true)"; then
  expect_status 2 "-d/--device mlx5_0: only for -t verbs or -t ofi, not for the transport chosen without -t (auto: socket" \
    "$RB" barrier --np 2 -d mlx5_0
fi
pass "without -t: N-rank commands refuse options the chosen transport does not read"

# Issue 13: --gbits / --full without effect under the chosen format.
expect_status 2 "--gbits: lat reports latency only" "$RB" lat -t socket -s 8 -n 10 --gbits -f osu
expect_status 2 "--gbits with --format osu: osu_bw's layout has MB/s only" \
  "$RB" bw -t socket -s 8 -n 10 --gbits -f osu
expect_status 2 "--full with bw: OSU's -f columns" "$RB" bw -t socket -s 8 -n 10 -f osu --full
expect_status 2 "--full with ring: OSU's -f columns" "$RB" ring --np 2 -t socket -f osu --full
timeout 60 "$RB" bw -t socket -s 8 -n 10 --gbits -f perftest >"$TMP/bw.pt" || fail "bw --gbits -f perftest"
grep -q "BW average\[Gb/sec\]" "$TMP/bw.pt" || fail "bw --gbits -f perftest: no Gb/sec column: $(cat "$TMP/bw.pt")"
pass "--gbits / --full refused where the format has no place for them; kept where it has"

# Sizes above the limit are named as typed.
expect_status 2 "--size 3G: larger than the limit of 2147483647 bytes (2 GiB - 1)" "$RB" lat -t socket -s 3G
expect_status 2 "--size 2G: larger than the limit of 1073741824 bytes (1G per rank)" \
  "$RB" allreduce --np 2 -t socket -s 8,2G
pass "sizes above the limit: the value as typed and the limit"
