# The bash completion cmake/Docs.cmake generates (BUILD/doc/rdmabench.bash), loaded as
# bash-completion loads it: COMPREPLY for subcommands, options, option values and files.
source "$(dirname "$0")/lib.sh"
FILE=$(dirname "$RB")/doc/rdmabench.bash
[ -f "$FILE" ] || fail "$FILE missing: the rdmabench target's POST_BUILD step (cmake/Docs.cmake) did not run"
"$RB" help --bash-completion | cmp -s - "$FILE" || fail "$FILE is stale"
BC=/usr/share/bash-completion/bash_completion
[ -f "$BC" ] || fail "bash-completion is missing (ci/install-deps.sh: bash-completion)"
mkdir -p "$TMP/files" && touch "$TMP/files/osu.txt" "$TMP/files/rb.json"
# complete WORDS...: the completions of the last word (COMP_CWORD = the last index), one a line.
cat >"$TMP/run.sh" <<SH
source $BC
source $FILE
cd $TMP/files
complete_words() {
  COMP_WORDS=("\$@"); COMP_CWORD=\$((\$# - 1)); COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}
  COMPREPLY=()
  _rdmabench rdmabench "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\n' "\${COMPREPLY[@]}" | sort
}
SH
got() { bash -c "source $TMP/run.sh; complete_words $*" 2>"$TMP/err"; }
expect() {
  local want=$1; shift
  local have; have=$(got "$@" | tr '\n' ' ' | sed 's/ $//')
  [ "$have" = "$want" ] || fail "complete '$*': got '$have', expected '$want' ($(cat "$TMP/err"))"
}
expect "allreduce" rdmabench allr
expect "-V" rdmabench -V
expect "--version" rdmabench --vers
expect "barrier bw" rdmabench b
expect "read send tagged write" rdmabench bw --op "''"
expect "ofi socket verbs" rdmabench lat -t "''"
expect "--sizes" rdmabench pairs --siz
expect "dissemination sharp" rdmabench barrier --algo "''"
expect "stream window" rdmabench bw --mode "''"
expect "csv imb json osu perftest table" rdmabench lat -f "''"
expect "csv json table" rdmabench pairs -f "''"
expect "off on yield" rdmabench ring -e "''"
expect "--bidir" rdmabench bw --bid
expect "" rdmabench lat --bid
expect "osu.txt rb.json" rdmabench compare "''"
expect "lat" rdmabench help la
# Devices come from /sys/class/infiniband at completion time (none here: nothing offered).
want=$({ ls /sys/class/infiniband 2>/dev/null || true; } | sort | tr '\n' ' ' | sed 's/ $//')
expect "$want" rdmabench lat -d "''"
pass "bash completion: commands, options, values of --op/-t/--algo/--mode/-f/-e, files, devices"
