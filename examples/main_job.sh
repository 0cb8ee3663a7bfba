#!/usr/bin/env bash
# The README's main job: a fault-tolerant run on the in-process default, with two injected
# failures; the program checks its result against the failure-free one and exits non-zero if
# they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -p runthrough --example run_through -- --ranks 8 --kill 3@2,5@5 "$@"
