#!/usr/bin/env bash
# Short, bounded fuzzing of the wire decoder and the shared-memory ring's reader
# (fuzz/README.md): installs cargo-fuzz if missing, builds the targets, runs each from its seed
# corpus for FUZZ_SECONDS (default 20) and fails, with the crashing input's path and the command
# that replays it, if one crashes or hangs. On a fresh machine, with ring_reader: about 2 min to
# install cargo-fuzz, 2 min to build the three targets, 70 s of fuzzing.
#
# On stable Rust: cargo fuzz needs nightly-only compiler flags, which RUSTC_BOOTSTRAP=1 lets
# the stable compiler take. No sanitizer (-s none): the decoder is safe Rust (the ring's few
# unsafe blocks are raw copies and atomics whose bounds the ring checks), and without ASan
# the runs are about three times faster; debug assertions (-a) keep overflow checks on.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-20}
TARGETS=${FUZZ_TARGETS:-"frame_decoder frame_roundtrip ring_reader"}
FLAGS=(-O -a -s none)
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never
start=$(date +%s)

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz missing: installing it (about 2 minutes on 2 cores)"
  t=$(date +%s)
  timeout 300 cargo install cargo-fuzz --locked --quiet
  echo "installed $(cargo fuzz --version) in $(($(date +%s) - t)) s"
fi

echo "building the fuzz targets: $TARGETS"
t=$(date +%s)
for target in $TARGETS; do
  timeout 300 cargo fuzz build "${FLAGS[@]}" "$target"
done
echo "built in $(($(date +%s) - t)) s"

logs=fuzz/target/ci-logs
mkdir -p "$logs"
failed=0
for target in $TARGETS; do
  # New inputs go to corpus-run/ (git-ignored); the committed seeds are only read.
  mkdir -p "fuzz/corpus-run/$target" "fuzz/artifacts/$target"
  log="$logs/$target.log"
  echo "fuzzing $target for $SECONDS_EACH s (log: $log)"
  before=$(find "fuzz/artifacts/$target" -type f | wc -l)
  status=0
  timeout $((SECONDS_EACH + 120)) cargo fuzz run "${FLAGS[@]}" "$target" \
    "fuzz/corpus-run/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
  if [ "$status" -ne 0 ] || [ "$(find "fuzz/artifacts/$target" -type f | wc -l)" -ne "$before" ]; then
    failed=1
    echo "FAILED: $target (exit $status); the end of its log:"
    tail -n 60 "$log"
    artifact=$(ls -t "fuzz/artifacts/$target"/* 2>/dev/null | head -1 || true)
    if [ -n "$artifact" ]; then
      echo "crashing input: $artifact"
      echo "replay: RUSTC_BOOTSTRAP=1 cargo fuzz run ${FLAGS[*]} $target $artifact"
      echo "minimize: RUSTC_BOOTSTRAP=1 cargo fuzz tmin ${FLAGS[*]} $target $artifact"
    fi
  fi
done

echo "fuzzing took $(($(date +%s) - start)) s in all"
if [ "$failed" -ne 0 ]; then
  echo "fuzz: FAILED"
  exit 1
fi
echo "fuzz: no crash"
