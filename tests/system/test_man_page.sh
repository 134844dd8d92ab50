# The man page cmake/Docs.cmake generates at build time (BUILD/doc/rdmabench.1): current (equal
# to `rdmabench help --man`), renders without a single groff warning (-ww), `man -l` shows every
# command and every option of `lat --help`.
source "$(dirname "$0")/lib.sh"
PAGE=$(dirname "$RB")/doc/rdmabench.1
[ -f "$PAGE" ] || fail "$PAGE missing: the rdmabench target's POST_BUILD step (cmake/Docs.cmake) did not run"
"$RB" help --man >"$TMP/fresh.1"
cmp -s "$PAGE" "$TMP/fresh.1" || fail "$PAGE is stale: it differs from \`rdmabench help --man\`"
command -v groff >/dev/null || fail "groff is missing (ci/install-deps.sh: groff-base)"
command -v man >/dev/null || fail "man is missing (ci/install-deps.sh: man-db)"
groff -man -Tutf8 -ww -z "$PAGE" 2>"$TMP/groff.err" || fail "groff failed: $(cat "$TMP/groff.err")"
[ ! -s "$TMP/groff.err" ] || fail "groff warnings: $(head -20 "$TMP/groff.err")"
MANWIDTH=100 man -l "$PAGE" 2>"$TMP/man.err" | col -b >"$TMP/man.txt" || fail "man -l failed: $(cat "$TMP/man.err")"
[ ! -s "$TMP/man.err" ] || fail "man -l complained: $(head -20 "$TMP/man.err")"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT EXAMPLES "SEE ALSO"; do
  grep -q "^$s" "$TMP/man.txt" || fail "man page lacks section $s"
done
grep -qE '^ +rdmabench -V \| --version$' "$TMP/man.txt" ||
  fail "SYNOPSIS lacks 'rdmabench -V | --version': $(sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' "$TMP/man.txt")"
for c in lat bw server barrier allreduce ring pairs congestion rendezvous compare plot info; do
  grep -q "^   rdmabench $c\$" "$TMP/man.txt" || fail "man page lacks the section of $c"
done
# Every long option of lat --help appears in the rendered page.
"$RB" lat --help | grep -oE -- '--[a-z][a-z-]+' | sort -u >"$TMP/lat_opts"
[ "$(wc -l <"$TMP/lat_opts")" -ge 30 ] || fail "lat --help lists only $(wc -l <"$TMP/lat_opts") options"
while read -r o; do grep -qF -- "$o" "$TMP/man.txt" || fail "man page lacks $o"; done <"$TMP/lat_opts"
pass "man page current, no groff warnings, every section, command and lat option rendered"
