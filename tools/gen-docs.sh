#!/usr/bin/env bash
# Regenerates the option tables of docs/cli.md from the binary's own option descriptions
# (`rdmabench help --markdown`, lib/cli/help_gen.h): every block between
#   <!-- BEGIN GENERATED: CMD -->  and  <!-- END GENERATED: CMD -->
# is replaced by the generated one; the prose around them is kept.
#
#   tools/gen-docs.sh [--check] [path/to/rdmabench]     (default: build/rdmabench)
#
# --check changes nothing: it prints a diff and exits 1 when docs/cli.md differs from the
# generated text (the test system.test_docs_in_sync runs it), 0 when they agree.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
CHECK=0
if [ "${1:-}" = --check ]; then CHECK=1; shift; fi
RB=${1:-$SRC/build/rdmabench}
DOC=${DOC:-$SRC/docs/cli.md}
[ -x "$RB" ] || { echo "gen-docs: no binary at $RB (build it, or pass its path)" >&2; exit 2; }
GEN=$(mktemp)
OUT=$(mktemp)
trap 'rm -f "$GEN" "$OUT"' EXIT
"$RB" help --markdown >"$GEN"
python3 - "$DOC" "$GEN" "$OUT" <<'PY'
import re, sys
doc, gen, out = (open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3])
block = re.compile(r"<!-- BEGIN GENERATED: (\S+) -->\n.*?<!-- END GENERATED: \1 -->\n", re.S)
generated = {m.group(1): m.group(0) for m in block.finditer(gen)}
in_doc = [m.group(1) for m in block.finditer(doc)]
errors = [f"docs/cli.md has no block for '{n}' (add its markers where it belongs)"
          for n in generated if n not in in_doc]
errors += [f"docs/cli.md has a block for '{n}', which has no options any more"
           for n in in_doc if n not in generated]
errors += [f"docs/cli.md has two blocks for '{n}'" for n in set(in_doc) if in_doc.count(n) > 1]
if errors:
    sys.exit("gen-docs: " + "; ".join(errors))
open(out, "w").write(block.sub(lambda m: generated[m.group(1)], doc))
PY
if [ $CHECK = 1 ]; then
  if ! diff -u "$DOC" "$OUT"; then
    echo "gen-docs: docs/cli.md differs from \`rdmabench help --markdown\` (above);" \
      "run tools/gen-docs.sh to regenerate it" >&2
    exit 1
  fi
  echo "gen-docs: docs/cli.md agrees with the option descriptions"
else
  cp "$OUT" "$DOC"
fi
