#!/bin/bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Heat's two recoveries side by side, in one run (issue 17's figure): run-through (the dead
# rank's block moves to its buddy) and respawn (a new rank replaces it and gets the block),
# alternated ROUNDS times, in-process and as processes under rtrun, one kill each. Prints the
# medians of kill -> agreed (in-process only: rtrun's kill time is another process's clock),
# agreed -> restored (respawn: the replacement running with its state) and agreed -> recovered
# (redundancy back: the next checkpoint committed).
#
#   cargo build --release && crates/runthrough-bench/recovery.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-10}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
heat=target/release/heat
args=(--size 256 --iterations 60 --checkpoint 10 --quiet)
for _ in $(seq 1 "$rounds"); do
  for mode in run-through respawn; do
    timeout 60 "$heat" --recovery "$mode" --ranks 8 --kill 3@25 "${args[@]}" |
      grep '^recovery #1' | sed "s/^/in-process $mode: /" >>"$out"
    timeout 60 target/release/rtrun -n 8 --kill 3@validate_global:30 \
      "$heat" --recovery "$mode" "${args[@]}" 2>/dev/null |
      grep 'recovery #1' | sed "s/^/rtrun $mode: /" >>"$out"
  done
done
python3 - "$out" <<'PY'
import re, statistics, sys
def ms(text):
    text = text.strip()
    for unit, scale in (("µs", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * scale
            except ValueError:
                return None
    return None
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) (\S+): .*kill -> agreed ([^;]+); agreed -> recovered (\S+)", line)
    if not m:
        continue
    restored = re.search(r"restored in (\S+);", line)
    rows.setdefault((m[1], m[2]), []).append(
        (ms(m[3]), ms(restored[1]) if restored else None, ms(m[4])))
def median(values):
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):8.2f}" if values else "       -"
print(f"{'where':<11} {'recovery':<12} {'runs':>4} {'kill->agreed':>13} {'->restored':>11} {'->recovered':>12}  (ms, medians)")
for (where, mode), v in sorted(rows.items()):
    print(f"{where:<11} {mode:<12} {len(v):>4} {median(x[0] for x in v):>13} "
          f"{median(x[1] for x in v):>11} {median(x[2] for x in v):>12}")
PY
