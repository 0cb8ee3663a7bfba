#!/usr/bin/env bash
# Hydra's stand-in for ssh on the emulated hosts of .ci/multihost/up.sh:
#
#   mpiexec -launcher ssh -launcher-exec .ci/multihost/hydra-launcher.sh -hosts h1,h2,h3 ...
#
# with RT_MULTIHOST pointing at the run's hosts.env (mpiexec passes its environment on to its
# launcher). Hydra runs `LAUNCHER -x HOST COMMAND...` once per host, as it would run ssh; this
# runs COMMAND (Hydra's proxy) in every namespace of HOST (network, UTS, PID and mount: those
# of the host's first process, RT_MULTIHOST_INIT_Hn), through a shell, as sshd would. So the
# proxy and its ranks live on that host as its slurmd's tasks do: its address, its hostname,
# its processes only. HOST is a host's name (h1) or address (10.201.0.1).
set -euo pipefail
[ "${1-}" = -x ] && shift
host=${1:?usage: hydra-launcher.sh [-x] HOST COMMAND...}
shift
env_file=${RT_MULTIHOST:?RT_MULTIHOST (the hosts.env of .ci/multihost/up.sh) is not set}
value() { sed -n "s/^$1=//p" "$env_file"; }
init=
for n in 1 2 3; do
  if [ "$host" = "h$n" ] || [ "$host" = "$(value "RT_MULTIHOST_ADDR_H$n")" ]; then
    init=$(value "RT_MULTIHOST_INIT_H$n")
  fi
done
if [ -z "$init" ]; then
  echo "hydra-launcher.sh: no emulated host $host in $env_file" >&2
  exit 255
fi
exec nsenter --target "$init" --net --uts --pid --mount -- sh -c "$*"
