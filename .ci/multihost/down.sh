#!/usr/bin/env bash
# Stops and deletes what .ci/multihost/up.sh RUN made, as far as it got: the daemons by their
# PID files, then whatever else still runs in our namespaces (all of it started there by us:
# slurmstepd, ranks, Hydra's mpiexec, proxies and their launchers), then the namespaces
# themselves (their veth pairs and bridge go with them). Bounded; safe to run twice.
RUN=${1:?usage: down.sh RUN}
[ -d "$RUN" ] || exit 0

# Whether process $1 still runs (a zombie, which an init that does not reap may leave, has
# ended).
running() {
  local state
  state=$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "${state%% *}" != Z ]
}
# stop FILE [SIGNAL]: ends the process of a PID file, SIGKILL 5 s after SIGNAL (TERM).
stop() {
  local file=$1 signal=${2:-TERM} pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  kill -s "$signal" "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do running "$pid" || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  echo "multihost: killed $pid ($file)"
}
# The daemons' `unshare --fork` ignores SIGTERM while it waits: SIGKILL it, and the kernel
# sends the daemon SIGTERM (--kill-child=TERM); a host's slurmd, the first process of its PID
# namespace, takes every process of that host along when it ends.
for file in "$RUN"/host.*.pid; do stop "$file" KILL; done
stop "$RUN/head.pid" KILL
stop "$RUN/munge/munged.pid"

if [ -s "$RUN/namespaces" ]; then
  while read -r name; do
    for pid in $(ip netns pids "$name" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done < "$RUN/namespaces"
  while read -r name; do
    ip netns del "$name" 2>/dev/null
  done < "$RUN/namespaces"
  rm -f "$RUN/namespaces"
fi
true
