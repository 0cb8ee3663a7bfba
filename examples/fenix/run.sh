#!/usr/bin/env bash
# Fenix (Sandia's resilience library: spare ranks, in-memory data redundancy) built unchanged
# with rtcc through its own CMake, its tests and examples run by its own ctest under rtrun, and
# its ring example under rtrun's kills; with --compare, the same build and ctest under Open MPI
# 5's ULFM (crates/runthrough-bench/setup-openmpi.sh installs it), side by side.
#
# Usage: examples/fenix/run.sh FENIX_SOURCE_DIR [--compare]
#   FENIX_SOURCE_DIR: a checkout of https://github.com/sandialabs/Fenix (not fetched here).
# Needs cmake and `cargo build --release -p runthrough-c -p rtrun`. Builds in target/fenix/.
# Every job is bounded: ctest --timeout 60 per test, each rtrun job --timeout 60.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$(cd "${1:?usage: run.sh FENIX_SOURCE_DIR [--compare]}" && pwd)"
compare="${2:-}"
bin="$root/target/release"
for tool in rtcc rtrun; do
  [ -x "$bin/$tool" ] || { echo "no $bin/$tool: cargo build --release -p runthrough-c -p rtrun"; exit 2; }
done
out="$root/target/fenix"
mkdir -p "$out"

# build NAME CC MPIEXEC [PREFLAGS]: configures and builds Fenix with its tests and examples.
build() {
  local name=$1 cc=$2 mpiexec=$3 preflags=${4:-}
  rm -rf "$out/$name"
  timeout 300 cmake -S "$src" -B "$out/$name" -DCMAKE_C_COMPILER="$cc" -DBUILD_TESTING=ON \
    -DBUILD_EXAMPLES=ON -DBUILD_DOCS=OFF -DFENIX_SYSTEM_INC_FIX=OFF \
    -DMPIEXEC_EXECUTABLE="$mpiexec" -DMPIEXEC_PREFLAGS="$preflags" >"$out/$name.cmake.log" 2>&1 ||
    { tail -20 "$out/$name.cmake.log"; exit 1; }
  timeout 600 cmake --build "$out/$name" -j 2 >"$out/$name.build.log" 2>&1 ||
    { grep -E "error|undefined" "$out/$name.build.log" | head -20; exit 1; }
}

# tests NAME: runs Fenix's ctest; prints one "test result seconds" line per test.
tests() {
  local name=$1
  (cd "$out/$name" && timeout 1200 ctest --timeout 60 >"$out/$name.ctest.log" 2>&1) || true
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([a-z_]+) \.+ *\**([A-Za-z]+) +([0-9.]+) sec.*/\1 \2 \3/p' \
    "$out/$name.ctest.log"
}

echo "== Fenix under runthrough: build with rtcc"
build rt "$bin/rtcc" "$bin/rtrun"
tests rt >"$out/rt.results"
cat "$out/rt.results"

echo "== fenix_ring (5 ranks, 1 spare, no self-kill) under rtrun --kill 2@call:N"
ring="$out/rt/examples/02_send_recv/fenix/fenix_ring"
for n in 20 30 40; do
  result=$(timeout 90 "$bin/rtrun" -n 5 --timeout 60 --strict-faults --kill "2@call:$n" \
    "$ring" 1 99 2>&1 | grep -Eo "SUCCESS|FAILURE|timed out|did not fire" | head -1 || true)
  echo "kill 2@call:$n ${result:-no verdict}"
done

if [ "$compare" = "--compare" ]; then
  ompi="$(bash "$root/crates/runthrough-bench/setup-openmpi.sh" | tail -1)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "== Fenix under Open MPI 5 (ULFM): build with its mpicc"
  build ompi "$ompi/mpicc" "$ompi/mpiexec" "--oversubscribe"
  tests ompi >"$out/ompi.results"
  echo
  echo "| test | runthrough | s | Open MPI ULFM | s |"
  echo "|---|---|---:|---|---:|"
  join <(sort "$out/rt.results") <(sort "$out/ompi.results") |
    awk '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
fi
