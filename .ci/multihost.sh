#!/usr/bin/env bash
# The multi-host tests: jobs under Slurm and under MPICH's Hydra across three emulated hosts
# (network, UTS and PID namespaces joined by a bridge; Hydra reaches them through
# .ci/multihost/hydra-launcher.sh), crates/rtrun/tests/multihost.rs with skipping turned into
# failure. Needs root; installs slurm-wlm, munge, mpich and iproute2 when missing. The hosts and
# their Slurm (.ci/multihost/up.sh) are named after this run's PID, so that parallel or leftover
# runs never collide, and are torn down (.ci/multihost/down.sh, which also ends Hydra's proxies
# and ranks: they run in the hosts' namespaces) whatever happens. Bounded: every step has a
# time-out, and they add up to 460 s, under .ci/run's 480 for this script (60 + 140 for the
# packages, mpich installed with the others; 30 for the hosts; 45 + 45 for the builds; 140 for
# the tests); the tests take about a minute (19 tests, 9 of them under Hydra: 45-60 s on 2
# shared cores).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { echo; echo "=== $* ==="; }

step "multihost: packages"
if ! command -v srun >/dev/null || [ ! -x /usr/sbin/slurmd ] || [ ! -x /usr/sbin/slurmctld ] \
  || [ ! -x /usr/sbin/munged ] || ! command -v ip >/dev/null \
  || ! mpiexec --version 2>/dev/null | grep HYDRA >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  timeout 60 apt-get update -qq
  timeout 140 apt-get install -y -qq slurm-wlm munge mpich iproute2 >/dev/null
fi
dpkg-query -W slurm-wlm munge mpich iproute2 2>/dev/null || true

RUN=/tmp/rt-multihost-$$
bash .ci/multihost/down.sh "$RUN"; rm -rf "$RUN"   # a leftover of an earlier run with our PID
trap 'bash .ci/multihost/down.sh "$RUN"; rm -rf "$RUN"' EXIT
trap 'exit 143' TERM INT

step "multihost: three emulated hosts and Slurm over them"
timeout 30 bash .ci/multihost/up.sh "$RUN"

step "multihost: the heat binary and the tests"
# (Built already by the workspace's tests in .ci/run: these only check.)
timeout 45 cargo test -p runthrough-examples --no-run
timeout 45 cargo test -p rtrun --test multihost --no-run

step "multihost: srun and mpiexec across the hosts, a killed rank, a lost host, a split in halves"
RT_MULTIHOST=$RUN/hosts.env RT_LAUNCHER_TESTS=require timeout 140 cargo test -p rtrun --test multihost
echo
echo "multihost tests passed"
