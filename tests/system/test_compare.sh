# `rdmabench compare` and `rdmabench plot` through the real CLI: a live loopback run (socket)
# against a hand-written OSU fixture, the MPI-overhead arithmetic checked with python3, the
# osu/json round trip, one-line errors, PNG/SVG plots, and the progress line on a TTY only.
source "$(dirname "$0")/lib.sh"
FIX=$SRC/tests/fixtures
OSU=$FIX/osu_latency_verbs_rxm.txt

# Live runs (no MPI): 1 B .. 1 MiB, so the fixture's 2 MiB and 4 MiB rows are "only in" it.
timeout 120 "$RB" lat -t socket -m 1:1M -n 100 --warmup 5 --format osu -o "$TMP/rb.osu" 2>"$TMP/err" \
  || fail "lat --format osu: $(cat "$TMP/err")"
timeout 120 "$RB" lat -t socket -m 1:1M -n 100 --warmup 5 --format json -o "$TMP/rb.json" 2>"$TMP/err" \
  || fail "lat --format json: $(cat "$TMP/err")"
! grep -q "ETA" "$TMP/err" || fail "progress line printed although stderr is not a terminal"
pass "live rdmabench lat (osu and json), no progress line off a TTY"

# check_overhead COMPARE.json: every complete row must satisfy overhead = OSU - rdmabench and
# percent = overhead / rdmabench * 100. --baseline names a file not among the others, so it
# becomes the first input (index 0) and the OSU file the second.
check_overhead() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["groups"]) == 1, d["groups"]
g = d["groups"][0]
assert g["test"] == "latency" and g["unit"] == "us", g
assert [i["source"] for i in g["inputs"]] == ["rdmabench", "OSU"], g["inputs"]
assert g["inputs"][1]["mpi"] and not g["inputs"][0]["mpi"]
assert g["baseline"] == 0
diff = g["differences"][0]
assert diff["label"] == "MPI overhead" and diff["of"] == 1 and diff["to"] == 0, diff
complete = 0
for r in g["rows"]:
    rb, osu = r["values"]
    a, p = r["differences"][0]["absolute"], r["differences"][0]["percent"]
    if osu is None or rb is None:
        assert a is None and "only_in" in r, r
        continue
    complete += 1
    assert abs(a - (osu - rb)) < 1e-9, r
    assert abs(p - (osu - rb) / rb * 100) < 1e-9, r
sizes = {r["bytes"]: r for r in g["rows"]}
assert complete == 21, complete                       # 1 B .. 1 MiB
assert sizes[4194304]["only_in"] == [1], sizes[4194304]
assert sizes[4194304]["values"][1] == 1315.29
assert sizes[1]["values"][1] == 11.01
PY
}

"$RB" compare "$OSU" --baseline "$TMP/rb.osu" --format json >"$TMP/c1.json" || fail "compare osu vs rdmabench osu"
check_overhead "$TMP/c1.json" || fail "MPI overhead arithmetic (osu input)"
"$RB" compare "$OSU" --baseline "$TMP/rb.json" -f json -o "$TMP/c2.json" || fail "compare osu vs rdmabench json"
check_overhead "$TMP/c2.json" || fail "MPI overhead arithmetic (json input)"
pass "compare: MPI overhead = OSU - rdmabench, % of rdmabench (osu and json inputs)"

"$RB" compare "$OSU" --baseline "$TMP/rb.json" >"$TMP/c.txt" || fail "compare table"
grep -q "MPI overhead \[2\]: \[2\] - \[1\] in us, % of \[1\]" "$TMP/c.txt" || fail "table lacks the overhead legend: $(cat "$TMP/c.txt")"
grep -qE "^ *4194304 +- +1315.29 .*only in \[2\]" "$TMP/c.txt" || fail "4 MiB row not shown as only in the OSU file: $(cat "$TMP/c.txt")"
"$RB" compare "$OSU" "$TMP/rb.json" -f csv >"$TMP/c.csv" || fail "compare csv"
python3 - "$TMP/c.csv" <<'PY' || fail "compare csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 23 * 2, len(rows)
r = [x for x in rows if x["bytes"] == "1" and x["source"] == "rdmabench"][0]
assert r["diff_label"] == "MPI overhead" and r["diff_unit"] == "us", r
PY
pass "compare: table and csv"

# Round trip: the osu text and the JSON of the same kind of run; osu prints 2 decimals.
"$RB" compare "$TMP/rb.osu" "$TMP/rb.osu" -f json >"$TMP/rt.json" || fail "compare osu round trip"
python3 - "$TMP/rb.osu" "$TMP/rt.json" <<'PY' || fail "osu round trip"
import json, sys
want = {}
for line in open(sys.argv[1]):
    t = line.split()
    if t and not line.startswith("#"):
        want[int(t[0])] = float(t[1])
g = json.load(open(sys.argv[2]))["groups"][0]
got = {r["bytes"]: r["values"][0] for r in g["rows"]}
assert got == want, (got, want)
assert all(r["differences"][0]["absolute"] == 0 for r in g["rows"])
assert g["differences"][0]["label"] == "diff vs baseline"
PY
python3 - "$TMP/rb.json" >"$TMP/rb_from_json.osu" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("\n# OSU MPI-free Latency Test (rdmabench, from json)\n# Size       Avg Latency(us)")
for r in d["rows"]:
    print("%-10d%18.2f" % (r["bytes"], r["latency_us"]["mean"]))
PY
"$RB" compare "$TMP/rb.json" "$TMP/rb_from_json.osu" -f json >"$TMP/rt2.json" || fail "json vs osu"
python3 - "$TMP/rt2.json" <<'PY' || fail "json vs osu values"
import json, sys
g = json.load(open(sys.argv[1]))["groups"][0]
for r in g["rows"]:
    assert abs(r["differences"][0]["absolute"]) <= 0.005 + 1e-9, r
PY
pass "round trip: --format osu and --format json read back to the same numbers"

# Clear one-line errors.
expect_error "latency cannot be compared with bandwidth" "$RB" compare "$OSU" "$FIX/osu_bw_verbs_rxm.txt"
printf 'just some text\n' >"$TMP/junk.txt"
expect_error "junk.txt: unknown format" "$RB" compare "$OSU" "$TMP/junk.txt"
# Its own pairs JSON and CSV: refused saying what compare takes (newcomer trial: "no rows array",
# "unknown format").
timeout 60 "$RB" pairs --np 2 -t socket -n 5 --warmup 1 --bw-iters 2 -w 2 -f json -o "$TMP/pairs.json" ||
  fail "pairs --np 2"
expect_error "pairs.json: pairs JSON is not comparable: compare takes lat, bw and collective" \
  "$RB" compare "$OSU" "$TMP/pairs.json"
timeout 60 "$RB" lat -t socket -s 8 -n 10 -f csv -o "$TMP/lat.csv" || fail "lat -f csv"
expect_error "lat.csv: rdmabench CSV output is not read back" "$RB" compare "$OSU" "$TMP/lat.csv"
printf '# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n8388608              2000.00\n' >"$TMP/big.txt"
expect_error "no message size in common" "$RB" compare "$OSU" "$TMP/big.txt"
expect_error "needs at least two inputs" "$RB" compare "$OSU"
expect_error "--format osu: unknown for compare" "$RB" compare "$OSU" "$TMP/rb.json" -f osu
expect_error "gnuplot-nox" env RDMABENCH_GNUPLOT=/nonexistent/gnuplot "$RB" plot "$OSU" -o "$TMP/x.png"
expect_error "must end in .png or .svg" "$RB" plot "$OSU" -o "$TMP/x.jpg"
pass "compare/plot: one-line errors"

# Plots.
if ! command -v gnuplot >/dev/null; then
  [ "${CI:-}" = true ] && fail "gnuplot missing in CI (ci/install-deps.sh installs gnuplot-nox)"
  skip "gnuplot not installed (Debian: gnuplot-nox); compare checks passed"
fi
"$RB" plot "$OSU" "$FIX/osu_latency_tcp_rxm.txt" "$TMP/rb.json" -o "$TMP/lat.png" --size 640x480 \
  || fail "plot png"
python3 - "$TMP/lat.png" <<'PY' || fail "PNG check"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert len(data) > 1000, len(data)
assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
assert data[12:16] == b"IHDR"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (640, 480), (w, h)
PY
"$RB" compare "$OSU" --baseline "$TMP/rb.json" --plot "$TMP/cmp.svg" >/dev/null || fail "compare --plot"
grep -q "<svg" "$TMP/cmp.svg" || fail "compare --plot wrote no SVG"
pass "plot: 640x480 PNG; compare --plot SVG"

# Progress line: only on a terminal, never with --quiet.
if command -v script >/dev/null; then
  timeout 120 script -qec "$RB lat -t socket -m 1:256K -n 50 --warmup 2" /dev/null >"$TMP/tty.txt" 2>&1 \
    || fail "lat on a pty: $(cat "$TMP/tty.txt")"
  grep -q "ETA" "$TMP/tty.txt" || fail "no progress line on a terminal: $(head -c 2000 "$TMP/tty.txt")"
  grep -q "262144" "$TMP/tty.txt" || fail "rows missing on a terminal"
  timeout 120 script -qec "$RB lat -t socket -m 1:256K -n 50 --warmup 2 --quiet" /dev/null >"$TMP/tty2.txt" 2>&1 \
    || fail "lat --quiet on a pty"
  ! grep -q "ETA" "$TMP/tty2.txt" || fail "progress line despite --quiet"
  timeout 120 script -qec "$RB lat -t socket -m 1:256K -n 50 --warmup 2 -f json" /dev/null >"$TMP/tty3.txt" 2>&1 \
    || fail "lat json on a pty"
  ! grep -q "ETA" "$TMP/tty3.txt" || fail "progress line while JSON goes to stdout"
  pass "progress line: on a TTY only, not with --quiet or JSON on stdout"
else
  echo "note: util-linux script(1) missing; progress-line checks not run"
fi
