#!/usr/bin/env bash
# Before/after in one run: two builds of runthrough-bench alternated A B A B.
#
#   ab.sh BEFORE_BIN AFTER_BIN [ROUNDS] [ONLY] [-- more runthrough-bench flags]
#
# Runs `BIN --only ONLY --json FILE` for A then B, ROUNDS times (default 5), each bounded by a
# time-out, and prints one line per row: A's and B's median over the rounds of the rows'
# medians, each with its spread over the rounds (min..max), and B / A. A row is "slower" when
# B's median is above A's slowest round (outside the A-to-A spread). Build the "before" side
# from the parent commit in a worktree, e.g.:
#   git worktree add target/base HEAD~ &&
#   (cd target/base && CARGO_TARGET_DIR=$PWD/../base-target cargo build --release -p runthrough-bench)
set -euo pipefail
before=$1 after=$2 rounds=${3:-5} only=${4:-}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = "--" ] && shift
dir=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  for side in A B; do
    bin=$before
    [ "$side" = B ] && bin=$after
    args=(--json "$dir/$side.$round.json" "$@")
    [ -n "$only" ] && args+=(--only "$only")
    echo "round $round/$rounds: $side ($bin)" >&2
    timeout -k 10 1200 "$bin" "${args[@]}" >/dev/null 2>"$dir/$side.$round.log" ||
      echo "  $side round $round exited $?: see $dir/$side.$round.log" >&2
  done
done
python3 - "$dir" "$rounds" <<'EOF'
import json, sys, statistics, pathlib
d, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rows = {}
for side in "AB":
    for r in range(1, rounds + 1):
        f = d / f"{side}.{r}.json"
        if not f.exists():
            continue
        for line in f.read_text().splitlines():
            row = json.loads(line)
            if row["impl"] != "runthrough":
                continue
            key = (row["op"], row["transport"], row["ranks"], row["bytes"])
            rows.setdefault(key, {"A": [], "B": []})[side].append(row["median_us"])
print(f"{'op':<22}{'transport':<11}{'ranks':>5}{'bytes':>9}  {'A median (spread) us':>26}  {'B median (spread) us':>26}  B/A")
for key in sorted(rows):
    a, b = rows[key]["A"], rows[key]["B"]
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    flag = "  slower" if mb > max(a) else ""
    fa = f"{ma:.2f} ({min(a):.2f}..{max(a):.2f})"
    fb = f"{mb:.2f} ({min(b):.2f}..{max(b):.2f})"
    print(f"{key[0]:<22}{key[1]:<11}{key[2]:>5}{key[3]:>9}  {fa:>26}  {fb:>26}  {mb / ma:.2f}{flag}")
EOF
