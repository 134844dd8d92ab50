#!/usr/bin/env bash
# `rdmabench reg` (issue 39, docs/reg.md) on the host: socket (bookkeeping) and libfabric
# tcp;ofi_rxm (fi_mr_reg) give one row per size with the asked iterations and the timed calls
# named, and no GB/s where the registration pins nothing (socket; tcp's mr_mode none); thp buffers are whole 2 MiB pages; --pages huge either runs or names
# vm.nr_hugepages, as this machine's free huge pages decide; an unknown ofi provider (exit 2)
# and, on a host without RDMA devices, -t verbs (exit 3) leave an earlier -o file as it was; usage errors are one line, exit 2. verbs
# (ibv_reg_mr) runs in the rxe VM (tests/system/rxe/cli_verbs.sh). Counts only, no timing
# assertion. About 5 s.
source "$(dirname "$0")/lib.sh"

timeout 60 "$RB" reg -t socket -m 4K:64K -n 3 -f json -o "$TMP/s.json" 2>"$TMP/err" ||
  fail "reg -t socket: $(cat "$TMP/err")"
json_check "$TMP/s.json" "[r['bytes'] for r in d['rows']]==[4096<<i for i in range(5)] and all(r['iterations']==3 and r['reg_us']['t_avg']>=0 and r['mapped_bytes']>=r['bytes'] for r in d['rows']) and all(r['reg_gb_per_s'] is None for r in d['rows']) and 'bookkeeping only' in d['run']['note'] and d['run']['pages']=='small' and d['run']['prefault'] is True"
pass "reg -t socket: 5 sizes x 3 iterations, the bookkeeping said"

timeout 60 "$RB" reg -t ofi --provider 'tcp;ofi_rxm' -m 4K:1M -n 4 --warmup 2 --no-prefault \
  -f json -o "$TMP/o.json" 2>"$TMP/err" || fail "reg -t ofi tcp;ofi_rxm: $(cat "$TMP/err")"
json_check "$TMP/o.json" "len(d['rows'])==9 and all(r['iterations']==4 and r['reg_us']['t_max']>=r['reg_us']['t_min']>0 and r['reg_gb_per_s'] is None for r in d['rows']) and 'mr_mode none: the provider asks for no registration' in d['run']['note'] and d['run']['register_call']=='fi_mr_reg' and d['run']['deregister_call']=='fi_close' and d['run']['prefault'] is False and d['run']['warmup']==2 and d['run']['mr_cache'] is False and d['run']['provider']=='tcp;ofi_rxm'"
pass "reg -t ofi tcp;ofi_rxm: fi_mr_reg / fi_close, 9 sizes x 4, not prefaulted, mr_mode none said (no GB/s)"

timeout 60 "$RB" reg -t socket --pages thp -m 3M:6M -n 2 >"$TMP/thp.txt" 2>"$TMP/err" ||
  fail "reg --pages thp: $(cat "$TMP/err")"
grep -q '^# rdmabench .* reg: memory registration cost, socket on ' "$TMP/thp.txt" ||
  fail "table header: $(head -3 "$TMP/thp.txt")"
grep -q '^# pages: thp (2097152 B), touched before timing' "$TMP/thp.txt" ||
  fail "pages line: $(sed -n 2p "$TMP/thp.txt")"
grep -qE '^ +#bytes +iterations +reg_t_min\[us\] +reg_t_avg\[us\] +reg_t_max\[us\] +dereg_t_avg\[us\] +reg_GB/s$' \
  "$TMP/thp.txt" || fail "column names: $(cat "$TMP/thp.txt")"
[ "$(grep -cE '^ +[0-9]+ +2 ' "$TMP/thp.txt")" = 2 ] || fail "thp rows: $(cat "$TMP/thp.txt")"
pass "reg --pages thp: table header, columns, 2 rows"

free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
hsize=$(awk '/^Hugepagesize:/ {print $2 * 1024}' /proc/meminfo)
if [ "${free:-0}" -ge 2 ]; then
  timeout 60 "$RB" reg -t socket --pages huge -m "$hsize:$hsize" -n 2 -f json -o "$TMP/h.json" \
    2>"$TMP/err" || fail "reg --pages huge with $free free huge pages: $(cat "$TMP/err")"
  json_check "$TMP/h.json" "d['run']['pages']=='huge' and d['run']['page_bytes']==$hsize and len(d['rows'])==1"
  pass "reg --pages huge: $free huge pages free, one row"
else
  expect_status 2 "--pages huge: mmap(MAP_HUGETLB) of $hsize bytes failed" \
    "$RB" reg -t socket --pages huge -m "$hsize:$hsize" -n 2
  grep -q "/proc/sys/vm/nr_hugepages is" "$TMP/err" || fail "no nr_hugepages hint: $(cat "$TMP/err")"
  pass "reg --pages huge without free huge pages: exit 2 naming vm.nr_hugepages"
fi

cp "$TMP/s.json" "$TMP/keep.json"
expect_status 2 "--provider: 'no_such_provider' offers no" \
  "$RB" reg -t ofi --provider no_such_provider -m 4K:8K -n 2 -f json -o "$TMP/keep.json"
cmp -s "$TMP/s.json" "$TMP/keep.json" || fail "a refused provider replaced the -o file"
if [ ! -d /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  expect_status 3 "rdmabench reg: could not run: transport verbs: " \
    "$RB" reg -t verbs -m 4K:8K -n 2 -f json -o "$TMP/keep.json"
  cmp -s "$TMP/s.json" "$TMP/keep.json" || fail "a run that measured nothing replaced the -o file"
  pass "no RDMA device: exit 3 naming it; an unknown provider: exit 2; the earlier -o file kept"
else
  pass "an unknown provider: exit 2, the earlier -o file kept (this host has RDMA devices)"
fi

# SIGTERM part-way: exit 4; the sizes measured before it are written with the error (a run cut
# before its first size wrote nothing, and the earlier file stays).
rm -f "$TMP/int.json"
rc=0
timeout 60 timeout --preserve-status -s TERM 4 "$RB" reg -t ofi --provider 'tcp;ofi_rxm' \
  -m 4K:1G -n 1000000 -f json -o "$TMP/int.json" 2>"$TMP/err" || rc=$?
[ "$rc" = 4 ] || fail "SIGTERM: exit $rc, expected 4: $(cat "$TMP/err")"
grep -q "interrupted (SIGTERM)" "$TMP/err" || fail "SIGTERM: $(cat "$TMP/err")"
if [ -e "$TMP/int.json" ]; then
  json_check "$TMP/int.json" "len(d['rows'])>=1 and 'interrupted (SIGTERM)' in d['error']"
  pass "SIGTERM part-way: exit 4, the sizes measured kept with the error"
else
  pass "SIGTERM before the first size ended: exit 4, no file"
fi

expect_status 2 "--pages giant: unknown (valid: small, huge, thp)" "$RB" reg --pages giant
expect_status 2 "--mr-cache: only for -t ofi; -t socket has no registration cache" \
  "$RB" reg -t socket --mr-cache
expect_status 2 "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it" \
  "$RB" reg -t socket -d mlx5_0
expect_status 2 "bytes is above the memory available (" "$RB" reg -t socket -m 4K:4T
expect_status 2 "-m/--msg-sizes 0:4K: 0 bytes cannot be registered (minimum 1)" "$RB" reg -m 0:4K -t socket
pass "usage errors: one line, exit 2"
