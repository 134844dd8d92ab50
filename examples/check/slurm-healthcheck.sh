#!/bin/bash
# Slurm HealthCheckProgram: runs `rdmabench check` and drains this node with check's own first
# line as the reason when it fails (exit 1), or when it could not run (exit 3). Slurm does not act
# on a health check's exit status: the program drains the node itself (as LBNL NHC does).
#
# Install (every compute node; docs/check.md "Roll-out"):
#   install -m 0755 examples/check/slurm-healthcheck.sh /etc/slurm/rdmabench-healthcheck.sh
#   # slurm.conf (slurmd kills the program after 60 s: keep --budget well below it):
#   HealthCheckProgram=/etc/slurm/rdmabench-healthcheck.sh
#   HealthCheckInterval=300
#   HealthCheckNodeState=IDLE        # between jobs only; ANY also runs on busy nodes
#   # optional settings, sourced from /etc/rdmabench/check.conf (or $RDMABENCH_CHECK_CONF):
#   #   RDMABENCH=/usr/bin/rdmabench
#   #   CHECK_ARGS=(--budget 40 --baseline /var/lib/rdmabench/check --require-rdma)
#   #   CHECK_LOG=/var/log/rdmabench-check.log   # the last full report ($NODE may be used)
# A node this script drained is resumed by the script once a later check passes (only when the
# drain reason is one of ours: a drain set by an admin or by another tool is left alone).
set -u
CONF=${RDMABENCH_CHECK_CONF:-/etc/rdmabench/check.conf}
NODE=${SLURMD_NODENAME:-$(hostname -s)}  # slurmd sets it (emulated nodes share one host name)
RDMABENCH=rdmabench
CHECK_ARGS=(--budget 40)
CHECK_LOG=/var/log/rdmabench-check.log
# shellcheck source=/dev/null
[ -r "$CONF" ] && . "$CONF"
PATH=$PATH:/usr/sbin:/usr/bin:/sbin:/bin

out=$(timeout 55 "$RDMABENCH" check --node "$NODE" "${CHECK_ARGS[@]}" 2>&1)
rc=$?
printf '%s\n' "$out" >"$CHECK_LOG" 2>/dev/null || true
reason=$(printf '%s\n' "$out" | grep -m1 '^rdmabench check: ')
case $rc in
  0)
    # Resume only a drain of ours.
    current=$(scontrol show node "$NODE" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[.*$/\1/p')
    case $current in
      "rdmabench check: "*) scontrol update nodename="$NODE" state=resume ;;
    esac
    exit 0 ;;
  124) reason="rdmabench check: timed out after 55 s (HealthCheckProgram limit 60 s)" ;;
  *) [ -n "$reason" ] || reason="rdmabench check: exit $rc: $(printf '%s\n' "$out" | tail -1)" ;;
esac
# Slurm keeps the reason short: the first 250 characters are plenty for sinfo -R.
scontrol update nodename="$NODE" state=drain reason="${reason:0:250}"
exit "$rc"
