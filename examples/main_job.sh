#!/usr/bin/env bash
# The README's main job: the fault-tolerant 2D heat solver on the in-process default, 8 ranks,
# with two injected failures (rank 3 at iteration 50, rank 5 at iteration 127). The survivors
# validate at every iteration boundary, take over the dead ranks' blocks from their buddies'
# checkpoint copies, roll back and go on; the program compares its final field with the
# failure-free one bit for bit and exits non-zero if they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -p runthrough-examples --bin heat -- \
  --ranks 8 --size 512 --iterations 200 --checkpoint 20 --progress 20 --kill 3@50,5@127 "$@"
