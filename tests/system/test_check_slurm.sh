# examples/check/slurm-healthcheck.sh as Slurm's HealthCheckProgram on the throw-away Slurm
# (ci/slurm-cluster, 2 emulated nodes): a failing `rdmabench check` (--require-rdma on this host,
# which has no RDMA device; RDMABENCH_CHECK_SYSFS points at an empty tree so a host that has one
# fails the same way) drains the node with check's first line as the reason; once the check
# passes again the script resumes the node it drained. The nodes start healthy (a drain before
# the cluster is ready would stop the harness). Also runs the NHC check file's function and the
# prolog snippet by hand. About 20 s.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
EX=$SRC/examples/check
for f in slurm-healthcheck.sh nhc-rdmabench.nhc prolog-snippet.sh; do
  grep -q '^# Install' "$EX/$f" || fail "examples/check/$f: no install comment"
done
mkdir -p "$TMP/sys"
REASON="rdmabench check: node: no RDMA device (--require-rdma)"

# The conf the wrapper sources each run: healthy first, failing when the test says so.
healthy_conf() {
  cat >"$TMP/check.conf" <<CONF
RDMABENCH=$RB
export RDMABENCH_CHECK_SYSFS=$TMP/sys
CHECK_ARGS=(--skip measure --skip noise --budget 10)
CHECK_LOG=$TMP/check.\$NODE.log
CONF
}
healthy_conf
# slurmd runs the program with a clean environment: scontrol finds this cluster's slurm.conf
# through SLURM_CONF, which the commands inside the cluster write down (a real node has
# /etc/slurm/slurm.conf).
cat >"$TMP/hc.sh" <<SH
#!/bin/bash
export RDMABENCH_CHECK_CONF=$TMP/check.conf
[ -s "$TMP/slurm_conf" ] && export SLURM_CONF=\$(cat "$TMP/slurm_conf")
exec "$EX/slurm-healthcheck.sh"
SH
chmod +x "$TMP/hc.sh"

cat >"$TMP/inside.sh" <<SH
set -u
reason_of() { sinfo -h -N -n "\$1" -o '%E' | head -1; }
wait_reason() { # wait_reason NODE TEXT SECONDS
  for i in \$(seq 1 \$((\$3 * 4))); do
    [ "\$(reason_of "\$1")" = "\$2" ] && return 0
    sleep 0.25
  done
  echo "n1 reason after \$3 s: '\$(reason_of "\$1")', state \$(sinfo -h -N -n "\$1" -o '%T')" >&2
  return 1
}
echo "\$SLURM_CONF" >"$TMP/slurm_conf"
sed -i 's/^CHECK_ARGS=(/CHECK_ARGS=(--require-rdma /' "$TMP/check.conf"
wait_reason n1 "$REASON" 30 || exit 11
sinfo -h -N -n n1 -o '%T' | grep -Eq 'drain' || { echo "n1 not drained: \$(sinfo -h -N -n n1 -o '%T')" >&2; exit 12; }
echo "drained: \$(sinfo -h -N -n n1 -o '%T %E')"
# An admin's drain is left alone by the resume path.
scontrol update nodename=n2 state=drain reason="admin: cable swap"
sed -i 's/--require-rdma //' "$TMP/check.conf"
wait_reason n1 "none" 30 || exit 13
sleep 4  # two more health-check intervals
[ "\$(reason_of n2)" = "admin: cable swap" ] || { echo "n2: \$(reason_of n2)" >&2; exit 14; }
echo "resumed n1; n2 kept the admin's drain"
SH

rc=0
SLURM_CLUSTER_EXTRA_CONF="HealthCheckProgram=$TMP/hc.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY" \
  timeout 150 "$SRC/ci/slurm-cluster" -N 2 -c 2 -- bash "$TMP/inside.sh" >"$TMP/cluster.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "health check on Slurm (exit $rc): $(tail -n 20 "$TMP/cluster.out"; tail -5 "$TMP"/check.*.log 2>/dev/null)"
grep -q "^drained: .*$REASON" "$TMP/cluster.out" || fail "no drain line: $(cat "$TMP/cluster.out")"
pass "HealthCheckProgram: a failing check drains the node with its reason, a passing one resumes it"

# The NHC check function (NHC's die() stubbed) and the prolog snippet (scontrol stubbed).
cat >"$TMP/nhc.sh" <<SH
die() { echo "DIE \$1 \$2"; }
RDMABENCH=$RB
export RDMABENCH_CHECK_SYSFS=$TMP/sys
. "$EX/nhc-rdmabench.nhc"
check_rdmabench --skip measure --skip noise --budget 10 --require-rdma && echo PASSED
check_rdmabench --skip measure --skip noise --budget 10 && echo PASSED
SH
bash "$TMP/nhc.sh" >"$TMP/nhc.out" 2>&1
[ "$(cat "$TMP/nhc.out")" = "DIE 1 node: no RDMA device (--require-rdma)
PASSED" ] || fail "NHC check: $(cat "$TMP/nhc.out")"
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "scontrol $*" >>%s/scontrol.log\n' "$TMP" >"$TMP/bin/scontrol"
chmod +x "$TMP/bin/scontrol"
rc=0
PATH=$TMP/bin:$PATH RDMABENCH=$RB RDMABENCH_CHECK_SYSFS=$TMP/sys SLURMD_NODENAME=n7 \
  bash "$EX/prolog-snippet.sh" 2>"$TMP/prolog.err" || rc=$?
[ "$rc" = 0 ] || fail "prolog on a healthy node: exit $rc: $(cat "$TMP/prolog.err")"
mkdir -p "$TMP/sys/class/infiniband/mlx5_9/ports/1"
echo "1: DOWN" >"$TMP/sys/class/infiniband/mlx5_9/ports/1/state"
rc=0
PATH=$TMP/bin:$PATH RDMABENCH=$RB RDMABENCH_CHECK_SYSFS=$TMP/sys SLURMD_NODENAME=n7 \
  bash "$EX/prolog-snippet.sh" 2>"$TMP/prolog.err" || rc=$?
[ "$rc" = 1 ] || fail "prolog on a DOWN port: exit $rc"
grep -q '^scontrol update nodename=n7 state=drain reason=rdmabench check: mlx5_9/1: port state DOWN' "$TMP/scontrol.log" ||
  fail "prolog drain: $(cat "$TMP/scontrol.log")"
pass "NHC check and prolog snippet drain with the reason"
