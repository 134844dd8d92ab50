# `rdmabench compare` on what it must read or refuse (issue 13 §1, issue 12): every JSON
# rdmabench writes (lat, bw, allreduce, barrier, ring, A/B), each compared with itself and with
# the matching OSU/IMB fixture; IMB failed samples and defects; launcher prefixes; perftest
# cycles; OSU nan/inf; skipped-line reports; the input cap; memory on a large OSU log; deep JSON.
# About 30 s on 2 idle cores.
source "$(dirname "$0")/lib.sh"
FIX=$SRC/tests/fixtures

# run_json NAME ARGS...: a real run with --format json into $TMP/NAME.json.
run_json() {
  local name=$1; shift
  timeout 120 "$RB" "$@" -f json -o "$TMP/$name.json" 2>"$TMP/$name.err" \
    || fail "$*: $(tail -3 "$TMP/$name.err")"
}
run_json c2 allreduce --np 2 -m 8:64 -n 200
run_json b2 barrier --np 2 -n 200
run_json r2 ring --np 2 -s 1024 -n 200
run_json lat lat -t socket -m 1:1K -n 200 --warmup 5
run_json bw bw -t socket -m 1K:64K -n 50 --warmup 2
run_json ab lat --compare socket,socket -m 1:64 -n 100 --warmup 5
pass "live allreduce, barrier, ring, lat, bw and A/B runs with --format json"

# Each JSON compared with itself: every size present in both, every difference 0.
for name in c2 b2 r2 lat bw ab; do
  "$RB" compare "$TMP/$name.json" "$TMP/$name.json" -f json >"$TMP/self_$name.json" 2>"$TMP/err" \
    || fail "compare $name.json $name.json: $(cat "$TMP/err")"
  python3 - "$TMP/self_$name.json" "$name" <<'PY' || fail "$name.json against itself"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["groups"], d
for g in d["groups"]:
    assert g["rows"], g
    n = len(g["inputs"]) // 2  # series per file; input i of file 2 is input i - n of file 1
    for r in g["rows"]:
        assert None not in r["values"], r
        for k, diff in enumerate(g["differences"]):
            if diff["of"] - diff["to"] == n:
                assert r["differences"][k]["absolute"] == 0, r
test = {"c2": "allreduce", "b2": "barrier", "r2": "ring", "lat": "latency", "bw": "bandwidth", "ab": "latency"}[sys.argv[2]]
assert d["groups"][0]["test"] == test, (d["groups"][0]["test"], test)
if sys.argv[2] == "b2":
    assert d["groups"][0]["rows"][0]["bytes"] is None
if sys.argv[2] == "ab":
    assert len(d["groups"][0]["inputs"]) == 4, d["groups"][0]["inputs"]  # 2 variants x 2 files
PY
done
pass "compare reads every rdmabench JSON (allreduce, barrier, ring, lat, bw, A/B) against itself"

# ... and against the matching MPI fixture: MPI overhead on the common sizes.
check_mpi() {  # COMPARE.json TEST MIN_COMMON
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = [g for g in d["groups"] if g["test"] == sys.argv[2]][0]
assert g["differences"][0]["mpi_overhead"], g["differences"]
common = 0
for r in g["rows"]:
    v = r["values"]
    if v[0] is None or v[1] is None:
        continue
    common += 1
    for k, diff in enumerate(g["differences"]):
        fabric, mpi = v[diff["to"]], v[diff["of"]]  # input 0 (baseline) is rdmabench
        if mpi is None:
            continue
        want = fabric - mpi if g["metric"] == "bandwidth" else mpi - fabric  # "MB/s lost"
        assert abs(r["differences"][k]["absolute"] - want) < 1e-9, r
assert common >= int(sys.argv[3]), (common, g["rows"])
PY
}
"$RB" compare "$TMP/c2.json" "$FIX/osu_allreduce.txt" -f json >"$TMP/m1.json" || fail "allreduce vs OSU"
check_mpi "$TMP/m1.json" allreduce 4 || fail "allreduce vs OSU: $(cat "$TMP/m1.json")"
"$RB" compare "$TMP/c2.json" "$FIX/imb_pingpong_allreduce_barrier.txt" --test allreduce -f json >"$TMP/m2.json" \
  || fail "allreduce vs IMB"
check_mpi "$TMP/m2.json" allreduce 2 || fail "allreduce vs IMB"
"$RB" compare "$TMP/b2.json" "$FIX/osu_barrier.txt" -f json >"$TMP/m3.json" || fail "barrier vs OSU"
check_mpi "$TMP/m3.json" barrier 1 || fail "barrier vs OSU"
# The IMB fixture's Barrier ran 4 processes, the live barrier 2 ranks: refused, never compared
# across rank counts (issue 23).
expect_error "ran 2 processes but imb_pingpong_allreduce_barrier.txt:barrier ran 4" "$RB" compare "$TMP/b2.json" "$FIX/imb_pingpong_allreduce_barrier.txt" --test barrier
"$RB" compare "$TMP/lat.json" "$FIX/osu_latency_verbs_rxm.txt" -f json >"$TMP/m5.json" || fail "lat vs OSU"
check_mpi "$TMP/m5.json" latency 10 || fail "lat vs OSU"
"$RB" compare "$TMP/bw.json" "$FIX/osu_bw_verbs_rxm.txt" -f json >"$TMP/m6.json" || fail "bw vs OSU"
check_mpi "$TMP/m6.json" bandwidth 7 || fail "bw vs OSU"
"$RB" compare "$TMP/ab.json" "$FIX/osu_latency_verbs_rxm.txt" -f json >"$TMP/m7.json" || fail "A/B vs OSU"
pass "rdmabench JSON against the OSU/IMB fixtures: MPI overhead on the common sizes"

# IMB failed samples: "failed in IMB", never a value (the file against itself: its 4-process
# Allreduce has no 2-rank counterpart among the live runs).
"$RB" compare "$FIX/imb_allreduce_failed.txt" "$FIX/imb_allreduce_failed.txt" >"$TMP/imbf.txt" 2>"$TMP/imbf.err" \
  || fail "IMB with failed rows: $(cat "$TMP/imbf.err")"
grep -qE "^ *4194304 +failed .*\[1\] failed in IMB: out-of-mem" "$TMP/imbf.txt" \
  || fail "out-of-mem row not shown as failed: $(cat "$TMP/imbf.txt")"
grep -qE "^ *2097152 +failed .*\[1\] failed in IMB: time-out" "$TMP/imbf.txt" \
  || fail "time-out row not shown as failed: $(cat "$TMP/imbf.txt")"
! grep -q "2\.15" "$TMP/imbf.txt" || fail "the 2.148 GB of the sentence became a value"
"$RB" compare "$FIX/imb_allreduce_check.txt" "$FIX/imb_allreduce_check.txt" >"$TMP/imbd.txt" 2>/dev/null \
  || fail "IMB defects"
grep -qE "^ *1024 .*\[1\] warning: IMB reported 3 defects" "$TMP/imbd.txt" || fail "defects: $(cat "$TMP/imbd.txt")"
pass "IMB: out-of-mem / time-out rows are failed sizes; defects > 0 is a warning in the row"

# Launcher prefixes.
for f in osu_latency_tag_output osu_latency_timestamp_output osu_latency_srun_label; do
  "$RB" compare "$FIX/$f.txt" "$FIX/osu_latency_verbs_rxm.txt" >"$TMP/$f.out" 2>"$TMP/$f.err" \
    || fail "$f: $(cat "$TMP/$f.err")"
  grep -q "launcher prefix .* stripped" "$TMP/$f.err" || fail "$f: no note about the prefix: $(cat "$TMP/$f.err")"
  grep -qE "^ +1 +11.01 +11.01" "$TMP/$f.out" || fail "$f: rank 0's rows not read: $(cat "$TMP/$f.out")"
done
sed 's/^/node01: /' "$FIX/osu_latency_tcp_rxm.txt" >"$TMP/pdsh.txt"
"$RB" compare "$TMP/pdsh.txt" "$FIX/osu_latency_verbs_rxm.txt" >"$TMP/pdsh.out" 2>"$TMP/pdsh.err" \
  || fail "pdsh prefix: $(cat "$TMP/pdsh.err")"
grep -q "(pdsh) stripped" "$TMP/pdsh.err" || fail "pdsh prefix note: $(cat "$TMP/pdsh.err")"
sed 's/^/<n01> /' "$FIX/osu_latency_tcp_rxm.txt" >"$TMP/odd.txt"
expect_error "not a recognised launcher prefix" "$RB" compare "$TMP/odd.txt" "$FIX/osu_latency_verbs_rxm.txt"
pass "launcher prefixes stripped (tag, timestamp, srun --label, pdsh); an unknown prefix is named"

# perftest cycles.
expect_error "perftest reported CPU cycles" "$RB" compare "$FIX/perftest_send_lat_cycles.txt" "$FIX/perftest_send_lat.txt"
"$RB" compare "$FIX/perftest_send_lat_cycles.txt" "$FIX/perftest_send_lat.txt" --cpu-mhz 2600 -f json \
  >"$TMP/cyc.json" 2>/dev/null || fail "--cpu-mhz"
python3 - "$TMP/cyc.json" <<'PY' || fail "cycles converted"
import json, sys
g = json.load(open(sys.argv[1]))["groups"][0]
r = [r for r in g["rows"] if r["bytes"] == 2][0]
assert abs(r["values"][0] - 2620.67 / 2600) < 1e-9, r
PY
expect_error "--cpu-mhz 0x10" "$RB" compare "$FIX/perftest_send_lat_cycles.txt" "$FIX/perftest_send_lat.txt" --cpu-mhz 0x10
pass "perftest -C cycles: refused without --cpu-mhz, converted with it"

# OSU nan / inf / 0x10; skipped lines counted, listed with --verbose.
"$RB" compare "$FIX/osu_bw_nan.txt" "$FIX/osu_bw_nan.txt" --verbose >"$TMP/nan.txt" 2>"$TMP/nan.err" || fail "osu nan"
grep -qE "^ +2 +failed +failed .*OSU printed .-nan." "$TMP/nan.txt" || fail "nan row: $(cat "$TMP/nan.txt")"
grep -q "1 line(s) not understood and skipped (lines 9)" "$TMP/nan.err" || fail "skipped count: $(cat "$TMP/nan.err")"
grep -q "osu_bw_nan.txt:9: not understood (no message size): 0x10" "$TMP/nan.err" || fail "--verbose: $(cat "$TMP/nan.err")"
grep -qE "^ +16 +32.00" "$TMP/nan.txt" || fail "0x10 read as 16: $(cat "$TMP/nan.txt")"
pass "OSU nan/inf rows are failed sizes, 0x10 is not 16, skipped lines counted and listed"

# Deep JSON is refused with one line (no crash); the input cap.
python3 -c 'print("{\"rows\":" + "[" * 100000 + "]" * 100000 + "}")' >"$TMP/deep.json"
expect_error "deep.json: JSON nests deeper" "$RB" compare "$TMP/deep.json" "$TMP/lat.json"
expect_error "larger than the input limit" "$RB" compare "$FIX/osu_latency_verbs_rxm.txt" "$TMP/lat.json" --max-input 100
pass "deep JSON and oversized inputs refused with one line"

# Memory: a 60 MB OSU log (one table, sizes repeated) is streamed.
python3 - "$TMP/huge.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n")
    rows = "".join("%-10d%18.2f\n" % (1 << i, 1.0 + i) for i in range(23))
    f.write(rows * (60_000_000 // len(rows)))
PY
python3 - "$RB" "$TMP/huge.txt" "$FIX/osu_latency_verbs_rxm.txt" <<'PY' || fail "memory on a 60 MB log"
import resource, subprocess, sys
p = subprocess.run([sys.argv[1], "compare", sys.argv[2], sys.argv[3], "-f", "json"],
                   capture_output=True, timeout=300)
assert p.returncode == 0, p.stderr[-500:]
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("compare of a 60 MB OSU log: max RSS %.1f MB" % rss_mb)
assert rss_mb < 60, rss_mb  # streamed: far below the file size (was ~18x the file)
assert b"repeat a size" in p.stderr, p.stderr[-500:]
PY
pass "a 60 MB OSU log is streamed (RSS well below the file size)"
