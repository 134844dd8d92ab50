#!/bin/bash
# Slurm Prolog snippet: a short `rdmabench check` before each job on each of its nodes; a failing
# node is drained with check's reason and the job is requeued elsewhere (a Prolog that exits
# non-zero makes Slurm drain the node and requeue the job).
#
# Install (every compute node), as the whole Prolog or called from yours:
#   install -m 0755 examples/check/prolog-snippet.sh /etc/slurm/prolog.d/50-rdmabench-check.sh
#   # slurm.conf:   Prolog=/etc/slurm/prolog.d/*      (Slurm >= 21.08 runs every match)
#   #               PrologFlags=Alloc                 (run at allocation, not at the first step)
# Keep the budget small: the job waits for it. The counters and the port state are the cheap
# part; --skip noise saves its share. Record the history from the health check, not from here,
# so every node's history has the same kind of run.
set -u
NODE=${SLURMD_NODENAME:-$(hostname -s)}
out=$(timeout 25 "${RDMABENCH:-rdmabench}" check --node "$NODE" --budget 20 --skip noise \
  ${RDMABENCH_CHECK_BASELINE:+--baseline "$RDMABENCH_CHECK_BASELINE"} 2>&1)
rc=$?
[ "$rc" = 0 ] && exit 0
reason=$(printf '%s\n' "$out" | grep -m1 '^rdmabench check: ')
[ -n "$reason" ] || reason="rdmabench check: exit $rc"
scontrol update nodename="$NODE" state=drain reason="${reason:0:250}" 2>/dev/null
echo "$reason" >&2
exit 1
