# `rdmabench noise` against a real collective (issue 27, docs/noise.md "Cost to a collective"):
# bench/noise_vs_allreduce.sh measures `allreduce --np 2 -m 8:8` t_avg without and with an
# injector (5 ms every 10 ms on cpu 1, SCHED_FIFO above the ranks), and what `noise` predicts for
# T = the noise-free t_avg, interleaved, 3 rounds. The median of rise / predicted rise must lie
# within a factor of 3 either way. Measured on the 2-core CI VM at load 9-15: 0.48, 0.62, 0.68
# (the model assumes a rank computes all of T; in a 2-rank allreduce part of each call is waiting
# for the peer's message, where a detour hides, so the rise is below the prediction). 50% noise
# and not less: the rise (~T, 10-20 us) must stand well above the allreduce's own run-to-run
# spread on a loaded host (a few us), or the ratio is that spread. About 40 s.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (SCHED_FIFO)"
  skip "needs root for SCHED_FIFO (chrt)"
fi
[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs; nproc says $(nproc)"
timeout 300 bash "$SRC/bench/noise_vs_allreduce.sh" "$(dirname "$RB")" 3 5000 10000 >"$TMP/b.txt" 2>&1 ||
  fail "bench/noise_vs_allreduce.sh failed: $(tail -20 "$TMP/b.txt")"
cat "$TMP/b.txt"
ratio=$(awk '/^median ratio/ {print $3}' "$TMP/b.txt")
[ -n "$ratio" ] || fail "no median ratio"
awk -v r="$ratio" 'BEGIN { exit !(r >= 1/3 && r <= 3) }' ||
  fail "median rise / predicted rise $ratio outside 1/3..3"
pass "allreduce's rise under injected noise is within a factor of 3 of noise's prediction ($ratio)"
