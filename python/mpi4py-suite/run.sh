#!/usr/bin/env bash
# mpi4py's own test suite (test/main.py of the mpi4py 4.1.2 source) under rtrun:
#   bash python/mpi4py-suite/run.sh N        (N ranks; after python/setup.sh)
# Downloads and unpacks the source once (target/py/mpi4py-src), runs the suite with the
# exclusions of excluded.txt (each with its reason there), prints rank 0's counts (passed,
# skipped, failed, errors) and the excluded tests and modules by category, and exits non-zero
# when a test that is not excluded fails, errs, or the job does not end within the time-out
# (RT_SUITE_TIMEOUT seconds, 240 by default; rtrun stops the job then).
set -euo pipefail
N=${1:?usage: run.sh N}
cd "$(dirname "$0")/../.."
ROOT=$PWD
VENV=${RT_PY_VENV:-$ROOT/target/py/venv}
PY="$VENV/bin/python"
VERSION=4.1.2
LIMIT=${RT_SUITE_TIMEOUT:-240}
SRC="$ROOT/target/py/mpi4py-src"
HERE="$ROOT/python/mpi4py-suite"
[ -x "$PY" ] || { echo "run.sh: no venv at $VENV: run python/setup.sh first" >&2; exit 2; }
if [ ! -f "$SRC/mpi4py-$VERSION/test/main.py" ]; then
  mkdir -p "$SRC"
  # The sdist, its metadata prepared with the venv's own setuptools and Cython (setup.sh puts
  # them there): with build isolation and `--no-binary :all:`, pip built Cython from source
  # first, several minutes.
  timeout 120 "$PY" -m pip download -q --disable-pip-version-check --no-build-isolation \
    --no-binary mpi4py --no-deps "mpi4py==$VERSION" -d "$SRC"
  tar -xzf "$SRC/mpi4py-$VERSION.tar.gz" -C "$SRC"
fi
cd "$SRC/mpi4py-$VERSION"

# The options of excluded.txt, one a line (`-e REGEX` or `-x PATTERN`).
ARGS=()
while read -r opt value; do
  case "$opt" in -e|-x) ARGS+=("$opt" "$value") ;; esac
done < <(grep -v '^#' "$HERE/excluded.txt" | grep -v '^[[:space:]]*$')

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
start=$(date +%s.%N)
status=0
timeout $((LIMIT + 10)) env -u RT_PY_VENV "$ROOT/target/release/rtrun" -n "$N" --tag-output --timeout "$LIMIT" \
  "$PY" test/main.py "${ARGS[@]}" > "$LOG" 2>&1 || status=$?
took=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")

# Rank 0's unittest summary: "Ran T tests", then "OK (skipped=S)" or
# "FAILED (failures=F, errors=E, skipped=S)".
summary=$(grep -E '^\[0\] (Ran [0-9]+ tests?|OK|FAILED)' "$LOG" | tail -2 | tr '\n' ' ')
num() { echo "$summary" | grep -oE "$1=?[0-9]+" | grep -oE '[0-9]+' | head -1; }
ran=$(echo "$summary" | grep -oE 'Ran [0-9]+' | grep -oE '[0-9]+' || true)
skipped=$(num skipped || true); failures=$(num failures || true); errors=$(num errors || true)
ran=${ran:-0}; skipped=${skipped:-0}; failures=${failures:-0}; errors=${errors:-0}
passed=$((ran - skipped - failures - errors))

# What excluded.txt leaves out, by category.
excluded=$("$PY" - "$HERE/excluded.txt" <<'PYEOF'
import collections, fnmatch, re, sys, unittest
sys.path.insert(0, "test")
cats, modules, patterns, cat = collections.Counter(), [], [], "?"
for line in open(sys.argv[1]):
    m = re.search(r"^#\s*\[([\w-]+)\]", line)
    if m:
        cat = m.group(1)
    elif line.startswith("-e "):
        modules.append((cat, line[3:].strip()))
    elif line.startswith("-x "):
        p = line[3:].strip()
        patterns.append((cat, p if "*" in p else f"*{p}*"))
import glob, importlib
names = sorted(f[5:-3] for f in glob.glob("test/test_*.py"))
tests = 0
for name in names:
    hit = [c for c, r in modules if re.search(r, f"{name}.py")]
    if hit:
        cats[hit[0] + " (modules)"] += 1
        continue
    for case in unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(name)):
        for t in (case if isinstance(case, unittest.TestSuite) else [case]):
            for tt in (t if isinstance(t, unittest.TestSuite) else [t]):
                full = f"{type(tt).__module__}.{type(tt).__qualname__}.{tt._testMethodName}"
                c = next((c for c, p in patterns if fnmatch.fnmatchcase(full, p)), None)
                if c:
                    cats[c] += 1
                    tests += 1
print(f"{tests} tests and {sum(v for k, v in cats.items() if 'modules' in k)} modules:",
      ", ".join(f"{k} {v}" for k, v in sorted(cats.items())))
PYEOF
) || excluded="(could not count)"

echo "mpi4py $VERSION test suite, $N rank(s), ${took} s: ran $ran, passed $passed, skipped $skipped, failures $failures, errors $errors"
echo "excluded (python/mpi4py-suite/excluded.txt): $excluded"
if [ "$status" -ne 0 ] || [ "$failures" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$ran" -eq 0 ]; then
  echo "run.sh: FAILED at $N rank(s) (job exit status $status); the job's output:"
  grep -E '\.\.\. (FAIL|ERROR)|^\[[0-9]+\] (ERROR|FAIL):|rtrun:' "$LOG" | head -60 || true
  tail -40 "$LOG"
  exit 1
fi
echo "run.sh: passed at $N rank(s)"
