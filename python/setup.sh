#!/usr/bin/env bash
# The Python set-up in one command, from the repository root or anywhere:
#   bash python/setup.sh
# builds runthrough's C library and rtrun (release), makes a venv (target/py/venv, or
# $RT_PY_VENV), builds mpi4py from source against the library (MPICC=target/release/rtcc) and
# installs the runthrough package (python/) into it. mpi4py is rebuilt only when the venv has
# none built from this checkout's headers (its configure step records which MPI calls exist).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${RT_PY_VENV:-$ROOT/target/py/venv}
MPI4PY_VERSION=${RT_MPI4PY_VERSION:-4.1.2}

cargo build --release -p runthrough-c -p rtrun
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
"$PY" -m pip install -q --disable-pip-version-check 'setuptools>=61' wheel 'cython>=3' 'cffi>=1.15' pytest

STAMP="$VENV/.mpi4py-runthrough-headers"
WANT="$(cat crates/runthrough-c/include/mpi.h crates/runthrough-c/include/mpi-ext.h | sha256sum | cut -d' ' -f1) $MPI4PY_VERSION $ROOT"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  echo "python/setup.sh: building mpi4py $MPI4PY_VERSION from source against target/release/rtcc (about 3 min)"
  # -O1 -g0: the generated MPI.c is 10 MB; -O3 -g takes several times longer to compile.
  MPICC="$ROOT/target/release/rtcc" CFLAGS="-O1 -g0" "$PY" -m pip install -q --disable-pip-version-check \
    --no-cache-dir --force-reinstall --no-deps --no-build-isolation --no-binary mpi4py "mpi4py==$MPI4PY_VERSION"
  echo "$WANT" > "$STAMP"
fi
"$PY" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$ROOT/python"
"$PY" - <<'PYEOF'
import mpi4py
from mpi4py import MPI
print("python/setup.sh: mpi4py", mpi4py.__version__, "on", MPI.Get_library_version())
PYEOF
echo "python/setup.sh: ready: $PY (run programs with target/release/rtrun -n N $PY prog.py)"
