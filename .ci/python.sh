#!/usr/bin/env bash
# CI step for Python: builds mpi4py from source against runthrough's C library and installs
# the runthrough package (python/setup.sh), then runs the package's tests and the example
# under rtrun with kills (python/tests, pytest). Bounded: set-up 900 s, tests 300 s (each
# job inside also has its own rtrun --timeout). Prints its duration.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
timeout 900 bash python/setup.sh
timeout 300 "${RT_PY_VENV:-target/py/venv}/bin/python" -m pytest -v -p no:cacheprovider python/tests
echo "=== .ci/python.sh: $(($(date +%s) - start)) s ==="
