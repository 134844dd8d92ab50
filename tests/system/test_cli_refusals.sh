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

# Issue 35 item 3: an empty HOST (`lat "$NODE"`, NODE unset) is not a loopback run.
expect_status 2 "HOST '': empty host name (an unset shell variable?); omit HOST for a loopback run" \
  "$RB" lat "" -t socket -s 8 -n 10
expect_status 2 "HOST '': empty host name" "$RB" bw "" -t socket -s 8 -n 5
pass "an empty HOST is a usage error"

# Issue 35 item 4: compare's -o / --plot / --script naming an input or each other.
FIX=$SRC/tests/fixtures/osu_latency_verbs_rxm.txt
cp "$FIX" "$TMP/a.txt"; cp "$FIX" "$TMP/b.txt"; ln -s b.txt "$TMP/b.link"; ln "$TMP/b.txt" "$TMP/b.hard"
for out in "$TMP/b.txt" "$TMP/./b.txt" "$TMP/b.link" "$TMP/b.hard"; do
  expect_status 2 "--output $out: the same file as the input $TMP/b.txt" "$RB" compare "$TMP/a.txt" "$TMP/b.txt" -o "$out"
done
cmp -s "$FIX" "$TMP/b.txt" || fail "compare -o B changed its input B"
expect_status 2 "--script $TMP/a.txt: the same file as the input $TMP/a.txt" \
  "$RB" compare "$TMP/a.txt" "$TMP/b.txt" --plot "$TMP/p.png" --script "$TMP/a.txt"
expect_status 2 "--output $TMP/s.gp and --script $TMP/s.gp: the same file" \
  "$RB" compare "$TMP/a.txt" "$TMP/b.txt" -o "$TMP/s.gp" --plot "$TMP/p.png" --script "$TMP/s.gp"
pass "compare: -o / --plot / --script naming an input or each other is refused"

# Issue 35 item 5: -o FILE.json / FILE.csv without -f picks the format; a contradicting -f is refused.
timeout 60 "$RB" lat -t socket -s 8 -n 10 -o "$TMP/r.json" 2>/dev/null || fail "lat -o r.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/r.json" || fail "lat -o r.json is not JSON: $(head -3 "$TMP/r.json")"
timeout 60 "$RB" lat -t socket -s 8 -n 10 -o "$TMP/r.CSV" 2>/dev/null || fail "lat -o r.CSV"
head -1 "$TMP/r.CSV" | grep -q '^test,' || fail "lat -o r.CSV is not CSV: $(head -2 "$TMP/r.CSV")"
timeout 60 "$RB" barrier --np 2 -n 5 -o "$TMP/b.json" 2>/dev/null || fail "barrier -o b.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/b.json" || fail "barrier -o b.json is not JSON"
"$RB" compare "$TMP/a.txt" "$TMP/b.txt" -o "$TMP/c.json" 2>/dev/null || fail "compare -o c.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/c.json" || fail "compare -o c.json is not JSON"
expect_status 2 "--format table with --output $TMP/x.json: the file name says json; give -f json, or a name without .json" \
  "$RB" lat -t socket -s 8 -n 10 -f table -o "$TMP/x.json"
expect_status 2 "--format json with --output $TMP/x.csv: the file name says csv" \
  "$RB" allreduce --np 2 -f json -o "$TMP/x.csv"
[ ! -e "$TMP/x.json" ] && [ ! -e "$TMP/x.csv" ] || fail "a refused -o file was created"
timeout 60 "$RB" lat -t socket -s 8 -n 10 -f osu -o "$TMP/r.txt" 2>/dev/null || fail "lat -f osu -o r.txt"
pass "-o NAME.json / NAME.csv picks the format; -f contradicting the name is refused"
