#!/usr/bin/env bash
# The launcher tests (SPEC §4): jobs under MPICH's Hydra `mpiexec` and Slurm's `srun --mpi=pmi2`.
# Installs mpich, slurm-wlm and munge when missing (needs root and apt), starts a one-node Slurm
# on localhost (.ci/slurm/start.sh), runs crates/rtrun/tests/launchers.rs with skipping turned
# into failure, and stops Slurm by PID file whatever happens. Every step is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { echo; echo "=== $* ==="; }

step "launchers: packages"
if ! command -v mpiexec >/dev/null || ! command -v srun >/dev/null || [ ! -x /usr/sbin/munged ]; then
  export DEBIAN_FRONTEND=noninteractive
  timeout 90 apt-get update -qq
  timeout 180 apt-get install -y -qq mpich slurm-wlm munge >/dev/null
fi
mpiexec --version | sed -n 1,2p  # sed reads it all: `head` could end the pipe early (SIGPIPE, exit 141 under pipefail)
dpkg-query -W slurm-wlm munge mpich 2>/dev/null || true

step "launchers: one-node Slurm"
export RT_SLURM_RUN=${RT_SLURM_RUN:-/tmp/runthrough-slurm}
export SLURM_CONF=$RT_SLURM_RUN/slurm.conf
.ci/slurm/stop.sh            # a Slurm left over from an earlier run of ours, by PID file
trap '.ci/slurm/stop.sh' EXIT
timeout 60 .ci/slurm/start.sh

step "launchers: tests under mpiexec and srun"
RT_LAUNCHER_TESTS=require timeout 150 cargo test -p rtrun --test launchers

step "launchers: the portable C test programs build with MPICH's mpicc"
RT_STOCK_MPICC=require timeout 90 cargo test -p runthrough-c --test stock_wrappers
echo
echo "launcher tests passed"
