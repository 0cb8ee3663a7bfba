#!/usr/bin/env bash
# Starts a one-node Slurm (munged, slurmctld, slurmd) on localhost for the launcher tests.
# Needs root and `apt-get install -y slurm-wlm munge`. Writes its configuration, logs and PID
# files under $RT_SLURM_RUN (default /tmp/runthrough-slurm); clients find it with
#   export SLURM_CONF=$RT_SLURM_RUN/slurm.conf
# Stop it with .ci/slurm/stop.sh (by PID file, never by name).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=${RT_SLURM_RUN:-/tmp/runthrough-slurm}
mkdir -p "$RUN/state" "$RUN/spool"
export SLURM_CONF=$RUN/slurm.conf
sed -e "s|@RUN@|$RUN|g" -e "s|@CPUS@|$(nproc)|g" "$HERE/slurm.conf.in" > "$SLURM_CONF"

# munge: the daemon runs as the munge user, with its key owned by it; the socket directory
# must be reachable by root's clients.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  head -c 1024 /dev/urandom > /etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 755 /run/munge
rm -f "$RUN/munged.started"
if ! munge -n >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  cp /run/munge/munged.pid "$RUN/munged.started" 2>/dev/null || true
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null

# slurm: -i ignores any saved state; slurmd is the node "localhost" whatever the hostname.
/usr/sbin/slurmctld -i -f "$SLURM_CONF"
/usr/sbin/slurmd -N localhost -f "$SLURM_CONF"
for _ in $(seq 150); do
  [ "$(sinfo -h -n localhost -o %t 2>/dev/null || true)" = idle ] && break
  sleep 0.2
done
state=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
if [ "$state" != idle ]; then
  echo "slurm: node localhost is '${state:-unreachable}', not idle; logs in $RUN" >&2
  exit 1
fi
echo "slurm: one node up (SLURM_CONF=$SLURM_CONF)"
