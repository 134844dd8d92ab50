# Every plot rdmabench draws through gnuplot (noise --plot, pairs --plot, compare --plot, plot -o)
# with hostile host names and hostile output paths (#36): gnuplot runs backquoted text inside a
# double-quoted string as a shell command, and pipes its output into a command when the file name
# starts with '|'. The noise plot put every rank's host name and the path into double quotes, so
# a rank whose host name was node7`touch X` ran that command as rank 0's user. Each case must
# leave no marker file behind and still render its plot. Host names come from SLURMD_NODENAME
# (the rank's host label, docs/rendezvous.md), which every --np rank inherits. Loopback, ~15 s.
source "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null || {
  [ "${CI:-}" = true ] && fail "CI must have gnuplot (gnuplot-nox)"
  skip "gnuplot is not installed (gnuplot-nox)"
}
cd "$TMP"
M=$TMP/marker
# Backquotes, $(...), both quotes, a backslash and a line break: each would be shell or gnuplot
# syntax in some quoting.
HOST=$(printf 'node7`touch %s.bq`$(touch %s.dollar)\x27q"\\\nset output "%s.nl"' "$M" "$M" "$M")
# The same in a path (no line break: refused, below; no '/' in the commands, which would name
# directories; the shell runs in $TMP), and a relative name starting with '|'.
PATHS=("$TMP/p\`touch marker.pbq\`\$(touch marker.pdollar)'q\".png" "|touch pipe #.svg")

markers() {  # fails when any marker file exists
  local found
  found=$(ls "$TMP" | grep -a '^marker\|^pipe$' || true)
  [ -z "$found" ] || fail "$1 ran a command: $found created"
}
rendered() {  # rendered FILE WHAT: the plot exists and is a PNG or SVG
  [ -s "$1" ] || fail "$2: no plot at $1"
  head -c 600 "$1" | grep -aq 'PNG\|<svg' || fail "$2: $1 is no PNG or SVG"
}

# 1. noise --plot: the host name on the heat map's tics, the path in `set output`.
for p in "${PATHS[@]}"; do
  SLURMD_NODENAME=$HOST timeout 60 "$RB" noise --np 2 -D 0.5 -o n.txt --plot "$p" 2>n.err ||
    fail "noise --plot '$p': $(cat n.err)"
  markers "noise --plot '$p'"
  rendered "${p/#|/./|}" "noise"
done
pass "noise --plot: hostile host name and paths, no command ran, plots drawn"

# 2. pairs --plot: the host name in the heat map's tics.
for p in "${PATHS[@]}"; do
  SLURMD_NODENAME=$HOST timeout 60 "$RB" pairs --np 2 -n 20 --warmup 2 --bw-size 4K --bw-iters 2 \
    -o pairs.txt --plot "$p" 2>pairs.err || fail "pairs --plot '$p': $(cat pairs.err)"
  markers "pairs --plot '$p'"
  rendered "${p/#|/./|}" "pairs"
done
pass "pairs --plot: hostile host name and paths, no command ran, plots drawn"

# 3. compare --plot and plot -o: a result file whose host names, transport and version are
# hostile (a file from elsewhere), and a hostile --title.
timeout 60 "$RB" lat -t socket -s 8 -n 200 -f json -o lat.json 2>lat.err ||
  fail "lat for the compare input: $(cat lat.err)"
python3 - lat.json "$HOST" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("local_host", "remote_host", "transport"):
    d["run"][k] = sys.argv[2]
d["run"]["tool_version"] = "1`touch marker.tv`'\""  # at most 64 bytes
json.dump(d, open("hostile.json", "w"))
PY
for p in "${PATHS[@]}"; do
  timeout 60 "$RB" plot hostile.json lat.json -o "$p" --title "$HOST" >/dev/null 2>plot.err ||
    fail "plot -o '$p': $(cat plot.err)"
  markers "plot -o '$p'"
  rendered "${p/#|/./|}" "plot"
  timeout 60 "$RB" compare hostile.json lat.json --plot "$p" >/dev/null 2>cmp.err ||
    fail "compare --plot '$p': $(cat cmp.err)"
  markers "compare --plot '$p'"
  rendered "${p/#|/./|}" "compare"
done
pass "compare --plot and plot -o: hostile host names, title and paths, no command ran"

# 4. A path with a line break cannot be a gnuplot string: a usage error naming the option.
NL=$(printf 'a\nb.png')
expect_status 2 "--plot a\\nb.png: a plot file name cannot hold control characters" \
  "$RB" noise --np 2 -D 0.5 --plot "$NL"
expect_status 2 "--plot a\\nb.png: a plot file name cannot hold control characters" \
  "$RB" pairs --np 2 --plot "$NL"
expect_status 2 "-o a\\nb.png: a plot file name cannot hold control characters" \
  "$RB" plot lat.json -o "$NL"
markers "a path with a line break"
pass "a plot path with a line break: usage error naming the option"
