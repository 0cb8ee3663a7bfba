#!/usr/bin/env bash
# Stops what .ci/slurm/start.sh started, by PID file: slurmd, slurmctld, and munged only if
# start.sh started it.
RUN=${RT_SLURM_RUN:-/tmp/runthrough-slurm}
stop() {
  local file=$1
  [ -s "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  echo "slurm: killed $pid ($file)"
}
stop "$RUN/slurmd.pid"
stop "$RUN/slurmctld.pid"
stop "$RUN/munged.started"
rm -f "$RUN/munged.started"
true
