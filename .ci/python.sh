#!/usr/bin/env bash
# CI step for Python: builds mpi4py from source against runthrough's C library and installs
# the runthrough package (python/setup.sh), then runs the package's tests and the example
# under rtrun with kills (python/tests, pytest), then mpi4py's own test suite at 1, 2 and 4
# ranks (python/mpi4py-suite/run.sh, with the exclusions of excluded.txt). A Python without
# venv support or without its C headers (a distribution's python3 alone) gets python3-venv and
# python3-dev from apt first.
# Bounded: packages 45 + 90 s, set-up 450 s (about 5-6 min from a clean clone, most of it
# mpi4py's compile), tests 100 s (each job inside also has its own rtrun --timeout), the suite
# 3 x 75 s (each run inside has rtrun --timeout 60; here they take about 7, 7 and 17 s, plus a
# one-time download of the source, 2 s): 910 s at most; it takes about 140 s, and .ci/run
# gives it 660. Prints its duration.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if ! python3 - <<'PYEOF'
import ensurepip, os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)
PYEOF
then
  echo "python3 lacks venv support or its headers: installing python3-venv and python3-dev"
  export DEBIAN_FRONTEND=noninteractive
  timeout 45 apt-get update -qq
  timeout 90 apt-get install -y -qq python3-venv python3-dev >/dev/null
fi
timeout 450 bash python/setup.sh
timeout 100 "${RT_PY_VENV:-target/py/venv}/bin/python" -m pytest -v -p no:cacheprovider python/tests
for n in 1 2 4; do
  RT_SUITE_TIMEOUT=60 timeout 75 bash python/mpi4py-suite/run.sh "$n"
done
echo "=== .ci/python.sh: $(($(date +%s) - start)) s ==="
