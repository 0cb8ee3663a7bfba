#!/usr/bin/env bash
# Emulated hosts and a Slurm over them, for crates/rtrun/tests/multihost.rs.
#
#   .ci/multihost/up.sh RUN     (as root; RUN: a new folder, e.g. /tmp/rt-multihost-$$)
#   .ci/multihost/down.sh RUN   (always: stops and deletes all that up.sh made, even half made)
#
# Makes four network namespaces named after RUN's last component (unique to the run: several
# runs, or a run's leftovers, never collide): "head" holds a bridge (10.201.0.254/24), the
# Slurm controller and the clients (srun, sinfo); "h1", "h2", "h3" are the hosts, each with
# one end of a veth pair (eth0: 10.201.0.1, .2, .3) whose other end (p1, p2, p3) is a port of
# the bridge. The controller and each slurmd also get a UTS namespace with their node's
# hostname (slurmctld must find its own name in SlurmctldHost; a rank's hostname names its
# host), and each slurmd a PID namespace (a host's processes see only that host's). A munged
# of our own serves them through a socket under RUN. No address outside the namespaces is
# used, so no traffic leaves them.
#
# Writes RUN/hosts.env (the tests read it where RT_MULTIHOST says):
#   RT_MULTIHOST_NS_HEAD, RT_MULTIHOST_NS_H1..3  the namespaces
#   RT_MULTIHOST_ADDR_HEAD, RT_MULTIHOST_ADDR_H1..3
#   RT_MULTIHOST_INIT_H1..3                      each host's first process (its slurmd), whose
#                                                namespaces hydra-launcher.sh enters
#   SLURM_CONF                                   the configuration clients use
# Every wait is bounded; on any failure the caller's trap runs down.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${1:?usage: up.sh RUN}
mkdir -p "$RUN"
RUN=$(cd "$RUN" && pwd)
TAG=$(basename "$RUN" | tr -c 'A-Za-z0-9_\n-' '-')
CPUS=$(nproc)
mkdir -p "$RUN/state" "$RUN/log" "$RUN/munge" "$RUN/spool/h1" "$RUN/spool/h2" "$RUN/spool/h3"
chmod 755 "$RUN" "$RUN/munge"

ns() { echo "$TAG-$1"; }
# Runs a command in network namespace $1 only (not `ip netns exec`, which also remounts /sys and
# so hides the cgroup file system that slurmd looks for).
in_ns() { local name=$1; shift; nsenter --net="/run/netns/$name" "$@"; }
# Recorded before each is made, so that down.sh deletes exactly these, however far up.sh got.
for name in head h1 h2 h3; do
  echo "$(ns "$name")" >> "$RUN/namespaces"
  ip netns add "$(ns "$name")"
  ip -n "$(ns "$name")" link set lo up
done

head=$(ns head)
ip -n "$head" link add br0 type bridge
ip -n "$head" addr add 10.201.0.254/24 dev br0
ip -n "$head" link set br0 up
for i in 1 2 3; do
  host=$(ns "h$i")
  ip link add eth0 netns "$host" type veth peer name "p$i" netns "$head"
  ip -n "$head" link set "p$i" master br0
  ip -n "$head" link set "p$i" up
  ip -n "$host" addr add "10.201.0.$i/24" dev eth0
  ip -n "$host" link set eth0 up
done

# munge: our own daemon, key and socket (the system's munged, if any, is left alone).
head -c 1024 /dev/urandom > "$RUN/munge/key"
chmod 400 "$RUN/munge/key"
MUNGE=$RUN/munge/socket
/usr/sbin/munged --force --socket="$MUNGE" --key-file="$RUN/munge/key" \
  --pid-file="$RUN/munge/munged.pid" --log-file="$RUN/log/munged.log" \
  --seed-file="$RUN/munge/seed"
for _ in $(seq 50); do munge -S "$MUNGE" -n >/dev/null 2>&1 && break; sleep 0.1; done
munge -S "$MUNGE" -n | unmunge -S "$MUNGE" >/dev/null

export SLURM_CONF=$RUN/slurm.conf
sed -e "s|@RUN@|$RUN|g" -e "s|@MUNGE@|$MUNGE|g" -e "s|@CPUS@|$CPUS|g" \
  "$HERE/slurm.conf.in" > "$SLURM_CONF"

# The controller, in the foreground (-D) under `unshare --kill-child=TERM`, whose PID goes to
# RUN/head.pid; -i: no saved state.
nsenter --net="/run/netns/$head" unshare --uts --fork --kill-child=TERM sh -c \
  "hostname head && exec /usr/sbin/slurmctld -D -i -f '$SLURM_CONF'" \
  < /dev/null >> "$RUN/log/slurmctld.out" 2>&1 &
echo $! > "$RUN/head.pid"
# Each slurmd is the first process of a PID namespace of its own, as on a host of its own: a
# rank sees the processes of its host only, so no rank can watch another host's processes end
# (runthrough-net's local.rs confirms deaths that way on one host). It runs in the foreground under
# `unshare --kill-child=TERM`, whose PID (in our namespace) goes to RUN/host.hN.pid: ending it
# ends the slurmd and, with it, every process of that host (down.sh).
for i in 1 2 3; do
  nsenter --net="/run/netns/$(ns "h$i")" \
    unshare --uts --pid --fork --kill-child=TERM --mount-proc sh -c \
    "hostname h$i && exec /usr/sbin/slurmd -D -N h$i -f '$SLURM_CONF'" \
    < /dev/null >> "$RUN/log/slurmd.h$i.out" 2>&1 &
  echo $! > "$RUN/host.h$i.pid"
done

idle() {
  [ "$(in_ns "$head" sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" = 3 ]
}
for _ in $(seq 150); do idle && break; sleep 0.2; done
if ! idle; then
  echo "multihost: the three nodes are not idle; logs in $RUN/log" >&2
  in_ns "$head" sinfo -N >&2 || true
  exit 1
fi

# Each host's first process: the one child of its `unshare` (the slurmd, PID 1 of the host).
init_of() {
  local unshare children
  unshare=$(cat "$RUN/host.$1.pid")
  children=$(cat "/proc/$unshare/task/$unshare/children")
  [ "$(echo "$children" | wc -w)" = 1 ] || { echo "multihost: $1 has no single slurmd" >&2; exit 1; }
  echo $children
}
init_h1=$(init_of h1)
init_h2=$(init_of h2)
init_h3=$(init_of h3)

cat > "$RUN/hosts.env" <<ENV
RT_MULTIHOST_NS_HEAD=$head
RT_MULTIHOST_NS_H1=$(ns h1)
RT_MULTIHOST_NS_H2=$(ns h2)
RT_MULTIHOST_NS_H3=$(ns h3)
RT_MULTIHOST_ADDR_HEAD=10.201.0.254
RT_MULTIHOST_ADDR_H1=10.201.0.1
RT_MULTIHOST_ADDR_H2=10.201.0.2
RT_MULTIHOST_ADDR_H3=10.201.0.3
RT_MULTIHOST_INIT_H1=$init_h1
RT_MULTIHOST_INIT_H2=$init_h2
RT_MULTIHOST_INIT_H3=$init_h3
SLURM_CONF=$SLURM_CONF
ENV
echo "multihost: hosts h1 h2 h3 and Slurm up (namespaces $TAG-*, SLURM_CONF=$SLURM_CONF)"
