#!/usr/bin/env bash
# Runs INSIDE the soft-RoCE VM (ci/rxe-vm run): the collectives through the CLI over verbs on
# rxe0 (forked local ranks, --np): allreduce with every algorithm and data checks, barrier,
# ring, pairs with lat/bw's engine options (--op write, --op read in stream mode with -l: real
# RDMA write and read, issue 37). On the host these cannot run (no RDMA device), so this is where
# `-t verbs` collectives are exercised end to end.
# Usage: bash tests/system/rxe/cli_coll_verbs.sh /path/to/rdmabench     Exit 0 = pass, 1 = fail.
set -euo pipefail

RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench}")
[ -n "${RXE_IP:-}" ] || { echo "FAIL: RXE_IP not set (run me inside ci/rxe-vm)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/rxe-coll.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
T0=$SECONDS
V=(-t verbs -d "${RXE_DEV:-rxe0}" --bind "$RXE_IP" --timeout 60)

for algo in tree ring rd rabenseifner; do
  timeout 300 "$RB" allreduce --np 3 "${V[@]}" --algo "$algo" -m 4:16K -n 3 --warmup 1 \
    --check -f json -o "$TMP/ar_$algo.json" 2>"$TMP/ar_$algo.err" ||
    fail "allreduce --algo $algo -t verbs: $(cat "$TMP/ar_$algo.err")"
done
timeout 300 "$RB" barrier --np 4 "${V[@]}" -n 20 --warmup 2 -f json -o "$TMP/barrier.json" \
  2>"$TMP/barrier.err" || fail "barrier -t verbs: $(cat "$TMP/barrier.err")"
timeout 300 "$RB" ring --np 3 "${V[@]}" -s 64 -n 50 --warmup 5 -f json -o "$TMP/ring.json" \
  2>"$TMP/ring.err" || fail "ring -t verbs: $(cat "$TMP/ring.err")"
timeout 300 "$RB" pairs --np 3 "${V[@]}" --op write -n 30 --warmup 2 --bw-size 16K --bw-iters 3 \
  -f json -o "$TMP/pairs_write.json" 2>"$TMP/pw.err" ||
  fail "pairs --op write -t verbs: $(cat "$TMP/pw.err")"
timeout 300 "$RB" pairs --np 2 "${V[@]}" --op read --mode stream -l 4 -n 30 --warmup 2 \
  --bw-size 16K --bw-iters 3 -f json -o "$TMP/pairs_read.json" 2>"$TMP/pr.err" ||
  fail "pairs --op read --mode stream -l 4 -t verbs: $(cat "$TMP/pr.err")"
python3 -S - "$TMP" <<'PY' || fail "collective JSON checks failed (above)"
import json, os, sys
t = sys.argv[1]
for algo in ("tree", "ring", "rd", "rabenseifner"):
    d = json.load(open(os.path.join(t, "ar_%s.json" % algo)))
    assert d['run']['transport'] == 'verbs', d['run']
    rows = d['rows']
    assert [r['bytes'] for r in rows] == [4 << i for i in range(13)], rows  # 4 B .. 16 KiB
    for r in rows:
        c = r['collective']
        assert c['ranks'] == 3 and c['wrong'] == 0 and c['t_avg_us'] > 0, r
b = json.load(open(os.path.join(t, "barrier.json")))
assert b['run']['transport'] == 'verbs' and b['rows'][0]['collective']['ranks'] == 4, b
assert b['rows'][0]['collective']['t_avg_us'] > 0, b
g = json.load(open(os.path.join(t, "ring.json")))
assert g['run']['transport'] == 'verbs' and len(g['rows']) == 6, g  # 3 ranks: 6 directed links
assert all(r['link']['median_us'] > 0 for r in g['rows']), g
for name, op, n in (("pairs_write", "write", 3), ("pairs_read", "read", 2)):
    p = json.load(open(os.path.join(t, name + ".json")))
    assert p['run']['transport'] == 'verbs' and p['run']['op'] == op, p['run']
    assert len(p['links']) == n * (n - 1), p['links']
    assert all(l['lat_median_us'] > 0 and l['mb_per_s'] > 0 for l in p['links']), p['links']
r = json.load(open(os.path.join(t, "pairs_read.json")))['run']
assert r['extra']['mode'] == 'stream' and r['extra']['post_list'] == 4 and r['round_trip'], r
print("collective JSON checks passed")
PY
pass "allreduce (tree, ring, rd, rabenseifner; 3 ranks, checked), barrier (4), ring (3), pairs --op write (3) and --op read --mode stream -l 4 (2) over verbs on rxe0 ($((SECONDS - T0)) s)"
