#!/bin/bash
# Stage 2 of the rxe VM: PID 1 on the overlay root (host root read-only + tmpfs), bash and all
# tools from the host. Copied into the per-run job share by ci/rxe-vm, which also writes
# params.sh (role, addresses, timeouts), env.sh (caller's environment) and cmd.sh (the command).
# Every fork+exec costs tens to hundreds of milliseconds under TCG, so this script uses bash
# builtins wherever it can.
# Protocol with the host (files in /run/rxe-vm = host job dir, 9p cache=none; every file is
# written with one write(), the host waits until it is non-empty):
#   booted   written when rxe0 is ACTIVE (content: guest uptime in seconds)
#   started  written when the command has been started
#   go       (host -> client) the client command may start
#   stop     (host -> server) the client has finished; stop the server command
#   timedout / stopped   the command was killed by the watchdog (timeout / stop request)
#   error    one-line reason of a harness failure inside the guest
#   status   the command's exit status (written last)
# Command stdout/stderr go to the virtio-serial ports named rxe.out / rxe.err.
J=/run/rxe-vm
# shellcheck source=/dev/null
source "$J/params.sh"
exec </dev/null >/dev/console 2>&1

log() {
  local u _
  read -r u _ </proc/uptime
  echo "rxe-vm[$VM_NAME] ${u}s: $*"
}
write_file() { printf '%s\n' "$2" >"$J/$1"; }
poweroff_now() {
  echo o >/proc/sysrq-trigger
  while :; do read -r -t 60 -u 9; done # PID 1 must never exit
}
die() {
  log "FATAL: $*"
  write_file error "$*"
  write_file status 125
  poweroff_now
}

# A fork-free sleep: read with a timeout on a fifo nobody writes to (made by stage 1).
exec 9<>/run/nap.fifo
nap() { read -r -t "$1" -u 9 || true; }

log "stage2 started"
echo "$VM_NAME" >/proc/sys/kernel/hostname
ulimit -l unlimited
ulimit -c 0

# Make this kernel's modules visible to modprobe (autoload) in the guest.
if [ -n "${MODTREE:-}" ] && [ -d "$MODTREE/$KVER" ]; then
  mkdir -p "/lib/modules/$KVER" && mount --bind "$MODTREE/$KVER" "/lib/modules/$KVER"
fi

# Writable host directories (--rw).
for i in "${!RW_DIRS[@]}"; do
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none "rw$i" "${RW_DIRS[$i]}" ||
    die "mount of writable share ${RW_DIRS[$i]} failed"
done

case "$NETMODE" in
  veth)
    NETDEV=veth0
    batch="link add veth0 type veth peer name veth1
link set veth1 up"
    ;;
  eth0)
    NETDEV=eth0
    [ -d /sys/class/net/eth0 ] || die "no eth0 in the guest (virtio_net missing?)"
    batch=
    ;;
  *) die "unknown NETMODE $NETMODE" ;;
esac
out=$(ip -batch - 2>&1 <<EOB
link set lo up
$batch
addr add $IP/$PREFIX dev $NETDEV
link set $NETDEV up
EOB
) || die "ip configuration of $NETDEV ($IP/$PREFIX) failed: ${out//$'\n'/; }"
out=$(rdma link add rxe0 type rxe netdev "$NETDEV" 2>&1) ||
  die "rdma link add rxe0 type rxe netdev $NETDEV failed: $out"
log "rxe0 added on $NETDEV"

port=/sys/class/infiniband/rxe0/ports/1
state=
for ((i = 0; i < 400; i++)); do
  read -r state <"$port/state"
  [[ "$state" == *ACTIVE* ]] && break
  nap 0.05
done
[[ "$state" == *ACTIVE* ]] || die "rxe0 port 1 not ACTIVE after 20 s (state: $state)"

# GID index of the RoCE v2 IPv4-mapped GID (::ffff:a.b.c.d) of our address.
IFS=. read -r a b c d <<<"$IP"
printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
GID_INDEX=
for ((i = 0; i < 400; i++)); do
  for g in "$port"/gids/*; do
    read -r gid <"$g" 2>/dev/null || continue
    [ "$gid" = "$want" ] || continue
    n=${g##*/}
    read -r type <"$port/gid_attrs/types/$n" 2>/dev/null
    if [ "$type" = "RoCE v2" ]; then
      GID_INDEX=$n
      break 2
    fi
  done
  nap 0.05
done
[ -n "$GID_INDEX" ] || die "no RoCE v2 GID for $IP on rxe0 after 20 s"

# Output ports.
OUT=''
ERR=''
for ((i = 0; i < 200; i++)); do
  for p in /sys/class/virtio-ports/*; do
    read -r name <"$p/name" 2>/dev/null || continue
    case "$name" in
      rxe.out) OUT=/dev/${p##*/} ;;
      rxe.err) ERR=/dev/${p##*/} ;;
    esac
  done
  [ -n "$OUT" ] && [ -n "$ERR" ] && [ -c "$OUT" ] && [ -c "$ERR" ] && break
  nap 0.05
done
[ -n "$OUT" ] && [ -n "$ERR" ] || die "virtio-serial ports rxe.out/rxe.err not found"

read -r up _ </proc/uptime
write_file booted "$up"
log "rxe0 ACTIVE on $NETDEV $IP, RoCE v2 IPv4 GID index $GID_INDEX"

if [ "$ROLE" = client ]; then
  while [ ! -e "$J/go" ]; do nap 0.1; done
  # Resolve the peer (ARP) before the command starts.
  for ((i = 0; i < 20; i++)); do
    busybox ping -c 1 -W 1 "$PEER_IP" >/dev/null 2>&1 && break
  done
  nap "${CLIENT_DELAY:-0}"
fi

# The command runs in its own process group (job control) so that the watchdog can kill all of
# it, with the caller's environment plus ours, in a subshell that sources cmd.sh.
set -m
(
  set +m
  exec 9<&- >"$OUT" 2>"$ERR"
  # shellcheck source=/dev/null
  source "$J/env.sh"
  export PATH="${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  export RXE_VM=1 RXE_VM_ROLE="$ROLE" RXE_DEV=rxe0 RXE_NETDEV="$NETDEV" RXE_IP="$IP"
  export RXE_GID_INDEX="$GID_INDEX"
  [ -n "${PEER_IP:-}" ] && export PEER_IP
  cd "$CWD" 2>/dev/null || { echo "rxe-vm: cannot cd to $CWD, running in /" >&2; cd /; }
  # shellcheck source=/dev/null
  source "$J/cmd.sh"
) &
pid=$!
set +m
write_file started "$pid"
log "command started"

# Watchdog: command timeout, and (server) the host's stop request.
(
  end=$((SECONDS + CMD_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= end)); then
      write_file timedout "$CMD_TIMEOUT"
      kill -TERM -- "-$pid" 2>/dev/null
      nap 5
      kill -KILL -- "-$pid" 2>/dev/null
      exit 0
    fi
    if [ -e "$J/stop" ]; then
      for ((i = 0; i < ${STOP_GRACE:-5} * 5; i++)); do
        kill -0 "$pid" 2>/dev/null || exit 0
        nap 0.2
      done
      write_file stopped "$STOP_GRACE"
      kill -TERM -- "-$pid" 2>/dev/null
      nap 3
      kill -KILL -- "-$pid" 2>/dev/null
      exit 0
    fi
    nap 0.5
  done
) &
watchdog=$!
wait "$pid"
status=$?
kill "$watchdog" 2>/dev/null
log "command exited with status $status"
write_file status "$status"
poweroff_now
