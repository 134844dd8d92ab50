#!/bin/bash
# Stage 2 of the rxe VM: PID 1 on the overlay root (host root read-only + tmpfs), bash and all
# tools from the host. Copied into the per-run job share by ci/rxe-vm, which also writes
# params.sh (role, addresses, timeouts), env.sh (caller's environment) and cmd.sh (the command).
# Protocol with the host (files in /run/rxe-vm = host job dir, 9p cache=none):
#   booted   written when rxe0 is ACTIVE (content: guest uptime in seconds)
#   started  written when the command has been started
#   go       (host -> client) the client command may start
#   stop     (host -> server) the client has finished; stop the server command
#   timedout / stopped   the command was killed by the watchdog (timeout / stop request)
#   error    one-line reason of a harness failure inside the guest
#   status   the command's exit status (written last, via rename)
# Command stdout/stderr go to the virtio-serial ports named rxe.out / rxe.err.
J=/run/rxe-vm
# shellcheck source=/dev/null
source "$J/params.sh"
exec </dev/null >/dev/console 2>&1

log() { echo "rxe-vm[$VM_NAME]: $*"; }
write_file() { printf '%s\n' "$2" >"$J/$1.tmp" && mv -f "$J/$1.tmp" "$J/$1"; }
poweroff_now() {
  echo o >/proc/sysrq-trigger
  while :; do sleep 60; done # PID 1 must never exit
}
die() {
  log "FATAL: $*"
  write_file error "$*"
  write_file status 125
  poweroff_now
}

# A fork-free sleep (fork+exec is slow under TCG): read with timeout on a silent fifo.
mkfifo /run/nap.fifo && exec 9<>/run/nap.fifo
nap() { read -r -t "$1" -u 9 || true; }

hostname "$VM_NAME"
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

ip link set lo up
case "$NETMODE" in
  veth)
    ip link add veth0 type veth peer name veth1 || die "ip link add veth0 type veth failed"
    NETDEV=veth0
    ip link set veth1 up
    ;;
  eth0)
    NETDEV=eth0
    [ -d /sys/class/net/eth0 ] || die "no eth0 in the guest (virtio_net missing?)"
    ;;
  *) die "unknown NETMODE $NETMODE" ;;
esac
ip addr add "$IP/$PREFIX" dev "$NETDEV" || die "ip addr add $IP/$PREFIX dev $NETDEV failed"
ip link set "$NETDEV" up || die "ip link set $NETDEV up failed"
out=$(rdma link add rxe0 type rxe netdev "$NETDEV" 2>&1) ||
  die "rdma link add rxe0 type rxe netdev $NETDEV failed: $out"

port=/sys/class/infiniband/rxe0/ports/1
for _ in $(seq 200); do
  case "$(cat "$port/state" 2>/dev/null)" in *ACTIVE*) break ;; esac
  nap 0.05
done
case "$(cat "$port/state" 2>/dev/null)" in
  *ACTIVE*) ;;
  *) die "rxe0 port 1 not ACTIVE after 10 s (state: $(cat "$port/state" 2>&1))" ;;
esac

# GID index of the RoCE v2 IPv4-mapped GID (::ffff:a.b.c.d) of our address.
IFS=. read -r a b c d <<<"$IP"
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
GID_INDEX=
for _ in $(seq 200); do
  for g in "$port"/gids/*; do
    n=${g##*/}
    if [ "$(cat "$g" 2>/dev/null)" = "$want" ] &&
      [ "$(cat "$port/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ]; then
      GID_INDEX=$n
      break 2
    fi
  done
  nap 0.05
done
[ -n "$GID_INDEX" ] || die "no RoCE v2 GID for $IP on rxe0 after 10 s"

# Output ports.
OUT= ERR=
for _ in $(seq 100); do
  for p in /sys/class/virtio-ports/*; do
    case "$(cat "$p/name" 2>/dev/null)" in
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
log "rxe0 ACTIVE on $NETDEV $IP (gid index $GID_INDEX) at uptime ${up}s"

# Environment of the command: the caller's exported variables, then ours.
# shellcheck source=/dev/null
source "$J/env.sh"
export PATH="${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export RXE_VM=1 RXE_VM_ROLE="$ROLE" RXE_DEV=rxe0 RXE_NETDEV="$NETDEV" RXE_IP="$IP"
export RXE_GID_INDEX="$GID_INDEX"
[ -n "${PEER_IP:-}" ] && export PEER_IP
cd "$CWD" 2>/dev/null || { log "cannot cd to $CWD, using /"; cd /; }

if [ "$ROLE" = client ]; then
  while [ ! -e "$J/go" ]; do nap 0.1; done
  # Resolve the peer (ARP) before the command starts.
  for _ in $(seq 20); do
    busybox ping -c 1 -W 1 "$PEER_IP" >/dev/null 2>&1 && break
  done
  nap "${CLIENT_DELAY:-0}"
fi

setsid bash "$J/cmd.sh" >"$OUT" 2>"$ERR" </dev/null &
pid=$!
write_file started "$pid"

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
      for _ in $(seq $((${STOP_GRACE:-5} * 5))); do
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
wait "$watchdog" 2>/dev/null
log "command exited with status $status"
write_file status "$status"
poweroff_now
