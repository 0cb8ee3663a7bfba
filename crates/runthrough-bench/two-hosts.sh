#!/usr/bin/env bash
# runthrough against Open MPI 5 (ULFM) between two emulated hosts, side by side in one run.
#
#   sudo crates/runthrough-bench/two-hosts.sh          (as root: it makes network namespaces)
#
# Two hosts, A and B: two network namespaces joined by a veth pair (10.98.X.1 and .2/24, no
# added latency, both ends named rt2h0), each with a UTS namespace of its own (its own hostname)
# held open by a `sleep` started here. Each job runs in A's namespaces; the upper half of its
# ranks run in B's:
#   runthrough: rtrun -n N --bind rt2h0 --wrap 'N/2-(N-1)=nsenter --target HOLDER_B --net --uts'
#               runthrough-bench --mp-worker collectives REPS TARGET_US ""
#   Open MPI:   mpiexec --with-ft ulfm -n N --hostfile (A and B, N/2 slots each)
#               --map-by ppr:N/2:node --mca pml ob1 --mca btl BTLS ompi_bench collectives ...
#               with one PRRTE daemon per host: PRRTE's ssh agent is replaced by a script that
#               runs the daemon's command in the target host's namespaces (as
#               .ci/multihost/hydra-launcher.sh does for Hydra). TCP (BTL and PRRTE's OOB) is
#               restricted to the veth's subnet.
# Both sides: ranks unbound (--bind-to none: Open MPI would bind each host's first rank to the
# same physical core); Open MPI told to yield when idle exactly when the job has more ranks
# than the machine's cores (runthrough's waiters decide so by themselves under rtrun).
#
# Two transport settings ("within a host" column), TCP between the hosts in both:
#   host: ranks of one host over runthrough's shared memory (beside a Unix socket) against
#         Open MPI's sm BTL (--mca btl tcp,sm,self): as on real hosts.
#   tcp:  TCP everywhere (RT_TRANSPORT=tcp against --mca btl tcp,self).
# At 2 ranks (one per host) the two are the same, so it runs once. Each (setting, ranks) job
# pair runs ROUNDS times, runthrough and Open MPI alternating which goes first; the table shows
# the median over the rounds of each job's median.
#
# Knobs (environment): ROUNDS (5), REPS (5), TARGET_US (20000: µs per repetition), MODES
# ("host tcp"), RANK_COUNTS ("2 4 8"), EXTRA_OPS=1 (also all_reduce 1 MiB, validate_global, shrink), BIN_DIR (holding
# rtrun, runthrough-bench, ompi_bench; default target/release; copied first, so a rebuild during
# the run does not matter), OMPI_BIN (default target/ompi-venv/bin), BUDGET (seconds for all the
# jobs, default 300; each job is also under a 120 s timeout), KEEP=1 (keep the work folder with
# every job's output).
#
# Everything it makes is named after its PID (namespaces rt2h$$-a/-b, the work folder) and is
# removed on any exit but a SIGKILL of the script: the running job is stopped, every process
# left in its two namespaces (all started here) is killed, the namespaces (and the veth with
# them) deleted.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "two-hosts.sh: run as root (it makes network namespaces)" >&2
  exit 2
fi

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN_DIR=${BIN_DIR:-$ROOT/target/release}
OMPI_BIN=${OMPI_BIN:-$ROOT/target/ompi-venv/bin}
ROUNDS=${ROUNDS:-5}
REPS=${REPS:-5}
TARGET_US=${TARGET_US:-20000}
MODES=${MODES:-host tcp}
EXTRA_OPS=${EXTRA_OPS:-0}
BUDGET=${BUDGET:-300}
JOB_TIMEOUT=120
RANK_COUNTS="${RANK_COUNTS:-2 4 8}"
FIRST_MODE=${MODES%% *}
for mode in $MODES; do
  case $mode in host | tcp) ;; *) echo "two-hosts.sh: MODES: host and/or tcp, not $mode" >&2; exit 2 ;; esac
done

for f in "$BIN_DIR/rtrun" "$BIN_DIR/runthrough-bench" "$BIN_DIR/ompi_bench" "$OMPI_BIN/mpiexec"; do
  [ -x "$f" ] || { echo "two-hosts.sh: $f is missing (cargo build --release -p rtrun -p runthrough-bench; runthrough-bench --compare builds ompi_bench and the venv)" >&2; exit 2; }
done

TAG=rt2h$$
NS_A=$TAG-a
NS_B=$TAG-b
IF=rt2h0
OCTET=$(($$ % 250))
SUBNET=10.98.$OCTET.0/24
ADDR_A=10.98.$OCTET.1
ADDR_B=10.98.$OCTET.2
CORES=$(nproc)

WORK=$(mktemp -d "/tmp/two-hosts.$$.XXXXXX")
made_ns=()
holders=()
current_job=

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM HUP
  if [ -n "$current_job" ]; then
    # timeout passes the TERM on to rtrun / mpiexec, which stop their ranks and daemons.
    kill -TERM "$current_job" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$current_job" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$current_job" 2>/dev/null
  fi
  # Every process still in our namespaces was started by this script (the holders, strays).
  for ns in "${made_ns[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for pid in "${holders[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for ns in "${made_ns[@]}"; do
    for _ in $(seq 20); do ip netns del "$ns" 2>/dev/null && break; sleep 0.1; done
  done
  if [ "${KEEP:-0}" = 1 ]; then
    echo "two-hosts.sh: kept $WORK" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# Copies of the binaries: another build may replace target/release's during the run.
mkdir -p "$WORK/bin"
cp "$BIN_DIR/rtrun" "$BIN_DIR/runthrough-bench" "$BIN_DIR/ompi_bench" "$WORK/bin/"
RTRUN=$WORK/bin/rtrun
BENCH=$WORK/bin/runthrough-bench
OMPI_BENCH=$WORK/bin/ompi_bench

# --- the two hosts -----------------------------------------------------------------------------
for ns in "$NS_A" "$NS_B"; do
  if ip netns list | grep -q "^$ns\b"; then
    echo "two-hosts.sh: namespace $ns exists already (not ours: left alone)" >&2
    exit 1
  fi
  made_ns+=("$ns")
  timeout 10 ip netns add "$ns"
  timeout 10 ip -n "$ns" link set lo up
done
timeout 10 ip link add "$IF" netns "$NS_A" type veth peer name "$IF" netns "$NS_B"
timeout 10 ip -n "$NS_A" addr add "$ADDR_A/24" dev "$IF"
timeout 10 ip -n "$NS_B" addr add "$ADDR_B/24" dev "$IF"
timeout 10 ip -n "$NS_A" link set "$IF" up
timeout 10 ip -n "$NS_B" link set "$IF" up

# A UTS namespace per host (hostname = the namespace's name), held by a sleep (killed on exit;
# if this script is SIGKILLed the sleeps still end by themselves, but the two named network
# namespaces stay: `ip netns del rt2hPID-a; ip netns del rt2hPID-b`).
for ns in "$NS_A" "$NS_B"; do
  nsenter --net="/run/netns/$ns" unshare --uts -- sh -c "hostname $ns && exec sleep $((BUDGET + 300))" \
    </dev/null >/dev/null 2>&1 &
  holders+=($!)
  disown "$!"  # killed in cleanup; no job-control notice then
done
HOLDER_A=${holders[0]}
HOLDER_B=${holders[1]}
for i in 0 1; do
  ns=$([ "$i" = 0 ] && echo "$NS_A" || echo "$NS_B")
  for _ in $(seq 50); do
    [ "$(timeout 5 nsenter --target "${holders[$i]}" --uts hostname 2>/dev/null)" = "$ns" ] && break
    sleep 0.1
  done
  [ "$(timeout 5 nsenter --target "${holders[$i]}" --uts hostname)" = "$ns" ] || { echo "two-hosts.sh: host $ns did not come up" >&2; exit 1; }
done
in_a() { nsenter --target "$HOLDER_A" --net --uts -- "$@"; }
WRAP_B="nsenter --target $HOLDER_B --net --uts --"

# PRRTE's stand-in for ssh: `agent [-x] HOST COMMAND...` runs COMMAND through a shell in HOST's
# network and UTS namespaces, as sshd would on that host (argv logged to agent.log).
cat > "$WORK/agent.sh" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >> "$WORK/agent.log"
[ "\${1-}" = -x ] && shift
host=\${1:?usage: agent.sh [-x] HOST COMMAND...}
shift
case \$host in
  $NS_A|$ADDR_A) target=$HOLDER_A ;;
  $NS_B|$ADDR_B) target=$HOLDER_B ;;
  *) echo "agent.sh: no emulated host \$host" >&2; exit 255 ;;
esac
exec nsenter --target "\$target" --net --uts -- sh -c "\$*"
EOF
chmod +x "$WORK/agent.sh"

# --- the jobs ----------------------------------------------------------------------------------
DEADLINE=$((SECONDS + BUDGET))

# run_job OUT ERR COMMAND...: COMMAND under timeout (120 s, less if the budget is nearly spent),
# in the background so that a signal reaches the trap at once.
run_job() {
  local out=$1 err=$2 left limit rc=0
  shift 2
  left=$((DEADLINE - SECONDS))
  if [ "$left" -lt 15 ]; then
    echo "skipped: the time budget ($BUDGET s) is spent" > "$err"
    : > "$out"
    return 124
  fi
  limit=$((left < JOB_TIMEOUT ? left : JOB_TIMEOUT))
  timeout -k 5 "$limit" "$@" > "$out" 2> "$err" &
  current_job=$!
  wait "$current_job" || rc=$?
  current_job=
  return "$rc"
}

job_limit() { local left=$((DEADLINE - SECONDS)); echo $((left < JOB_TIMEOUT ? left : JOB_TIMEOUT)); }

run_runthrough() { # MODE N ROUND
  local mode=$1 n=$2 round=$3 half=$(($2 / 2)) transport
  transport=$([ "$mode" = tcp ] && echo tcp || echo auto)
  local wrap_ranks=$half-$((n - 1))
  run_job "$WORK/rt-$mode-$n-$round.out" "$WORK/rt-$mode-$n-$round.err" \
    nsenter --target "$HOLDER_A" --net --uts -- \
    env RT_TRANSPORT="$transport" RT_VERBOSE=1 \
    "$RTRUN" -n "$n" --timeout $(($(job_limit) - 3)) --bind "$IF" --bind-to none \
    --wrap "$wrap_ranks=$WRAP_B" \
    "$BENCH" --mp-worker collectives "$REPS" "$TARGET_US" ""
}

run_openmpi() { # MODE N ROUND
  local mode=$1 n=$2 round=$3 half=$(($2 / 2)) btl yield
  btl=$([ "$mode" = tcp ] && echo tcp,self || echo tcp,sm,self)
  yield=$([ "$n" -gt "$CORES" ] && echo 1 || echo 0)
  printf '%s slots=%d\n%s slots=%d\n' "$NS_A" "$half" "$NS_B" "$half" > "$WORK/hosts-$n"
  run_job "$WORK/ompi-$mode-$n-$round.out" "$WORK/ompi-$mode-$n-$round.err" \
    nsenter --target "$HOLDER_A" --net --uts -- \
    env PATH="$OMPI_BIN:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$OMPI_BIN/mpiexec" --with-ft ulfm -n "$n" \
    --hostfile "$WORK/hosts-$n" --map-by "ppr:$half:node" --bind-to none \
    --prtemca plm_ssh_agent "$WORK/agent.sh" --prtemca oob_tcp_if_include "$SUBNET" \
    --mca pml ob1 --mca btl "$btl" --mca btl_tcp_if_include "$SUBNET" \
    --mca mpi_yield_when_idle "$yield" --mca btl_base_verbose 1 \
    "$OMPI_BENCH" collectives "$REPS" "$TARGET_US"
}

# One job's result: RESULT lines "MODE N IMPL OP BYTES MEDIAN" appended to results.
collect() { # IMPL MODE N ROUND RC
  local impl=$1 mode=$2 n=$3 round=$4 rc=$5 prefix
  prefix=$([ "$impl" = runthrough ] && echo rt || echo ompi)
  [ "$impl" = runthrough ] || impl=openmpi-ulfm
  local out=$WORK/$prefix-$mode-$n-$round.out err=$WORK/$prefix-$mode-$n-$round.err
  local rows
  rows=$(grep -h '^{' "$out" || true)
  if [ -z "$rows" ] || [ "$rc" != 0 ]; then
    echo "  $impl $mode $n ranks, round $round: exit status $rc, $(printf '%s\n' "$rows" | grep -c '^{') rows; stderr tail:" >&2
    grep -v -e 'mca: bml: Using' -e '^runthrough rank' "$err" | tail -n 8 | sed 's/^/    /' >&2
  fi
  printf '%s\n' "$rows" | sed -nE \
    's/.*"op":"([a-z_0-9]+)".*"bytes":([0-9]+),"median_us":([0-9.eE+-]+).*/\1 \2 \3/p' |
    while read -r op bytes median; do
      echo "$mode $n $impl $op $bytes $median"
    done >> "$WORK/results"
}

# Which transports a job used, from RT_VERBOSE=1 (runthrough) or btl_base_verbose 1 (Open MPI).
rt_transports() { # ERR N
  awk -v half=$(($2 / 2)) '
    function side(a, b) { return ((a < half) == (b < half)) ? "within a host" : "between hosts" }
    / connected to rank [0-9]+ over / {
      r = $3; sub(":", "", r); s = $7
      key = (r + 0 < s + 0) ? r " " s : s " " r; kind[key] = $9
    }
    / shared memory with rank / {
      r = $3; sub(":", "", r); s = $8; sub(":", "", s)
      key = (r + 0 < s + 0) ? r " " s : s " " r; shm[key] = 1
    }
    END {
      for (key in kind) {
        split(key, p, " "); k = kind[key]; if (key in shm) k = "shm"
        count[side(p[1] + 0, p[2] + 0) ": " k]++
      }
      out = ""
      for (c in count) out = out (out == "" ? "" : ", ") c " (" count[c] " pairs)"
      print (out == "" ? "none seen" : out)
    }' "$1"
}

ompi_transports() { # ERR+OUT files
  cat "$@" | awk '
    /mca: bml: Using [a-z]+ btl for send to/ {
      me = $1; sub(/^\[/, "", me); sub(/:.*/, "", me)
      btl = $5; node = $NF
      if (btl == "self") {
        rank = $(NF - 3); sub(/.*,/, "", rank); sub(/\].*/, "", rank)
        sub(/.*-/, "", me); on[me] = on[me] " " rank
        next
      }
      pairs[(me == node ? "within a host" : "between hosts") ": " btl]++
    }
    END {
      out = ""
      for (c in pairs) out = out (out == "" ? "" : ", ") c " (" pairs[c] / 2 " pairs)"
      print (out == "" ? "none seen" : out) "; ranks on A:" sorted(on["a"]) ", on B:" sorted(on["b"])
    }
    function sorted(list,   v, n, i, j, t, s) {
      n = split(list, v, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
      for (i = 1; i <= n; i++) s = s " " v[i]
      return s
    }'
}

echo "two hosts: $NS_A ($ADDR_A) and $NS_B ($ADDR_B), veth $IF, no added latency; $CORES cores shared by both"
echo "Open MPI: $("$OMPI_BIN/ompi_info" --version 2>/dev/null | head -n 1) (--with-ft ulfm, pml ob1, PRRTE daemon per host)"
echo "runthrough: $("$RTRUN" --version 2>/dev/null | head -n 1); collectives $REPS reps x ~$TARGET_US us per job, $ROUNDS rounds"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on these $CORES cores skews every row)"
: > "$WORK/results"
: > "$WORK/transports"
start=$SECONDS
for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    for n in $RANK_COUNTS; do
      # At 2 ranks (one per host) every setting is TCP only: run it once, in the first.
      if [ "$n" = 2 ] && [ "$mode" != "$FIRST_MODE" ]; then continue; fi
      order=$([ $((round % 2)) = 1 ] && echo "runthrough openmpi" || echo "openmpi runthrough")
      for impl in $order; do
        rc=0
        if [ "$impl" = runthrough ]; then run_runthrough "$mode" "$n" "$round" || rc=$?
        else run_openmpi "$mode" "$n" "$round" || rc=$?; fi
        collect "$impl" "$mode" "$n" "$round" "$rc"
        if [ "$round" = 1 ]; then
          if [ "$impl" = runthrough ]; then
            t=$(rt_transports "$WORK/rt-$mode-$n-1.err" "$n")
          else
            t=$(ompi_transports "$WORK/ompi-$mode-$n-1.err" "$WORK/ompi-$mode-$n-1.out")
          fi
          printf '%-5s %d ranks  %-10s %s\n' "$mode" "$n" "$impl" "$t" >> "$WORK/transports"
        fi
      done
      echo "  round $round, $mode, $n ranks: done at $((SECONDS - start)) s, load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
  done
done

echo
echo "Transports seen (round 1; runthrough from RT_VERBOSE=1, Open MPI from btl_base_verbose 1):"
sort -k1,1 -k2,2n -k4,4 "$WORK/transports" | sed 's/^/  /'
if [ -s "$WORK/agent.log" ]; then
  echo "PRRTE ran its ssh agent as: agent.sh $(head -n 1 "$WORK/agent.log" | cut -c1-60)... ($(wc -l < "$WORK/agent.log") calls)"
fi

# --- the table -----------------------------------------------------------------------------------
range_of() { # MODE N IMPL OP BYTES: "min–max" over rounds, or "-"
  awk -v m="$1" -v n="$2" -v i="$3" -v o="$4" -v b="$5" \
    '$1 == m && $2 == n && $3 == i && $4 == o && $5 == b { print $6 }' "$WORK/results" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf "%.4g–%.4g", v[1], v[NR] }'
}

median_of() { # MODE N IMPL OP BYTES: the median over rounds, or empty
  awk -v m="$1" -v n="$2" -v i="$3" -v o="$4" -v b="$5" \
    '$1 == m && $2 == n && $3 == i && $4 == o && $5 == b { print $6 }' "$WORK/results" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) exit
      printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ops=(
  "p2p 8 B one-way|p2p_latency|8|p2p_latency|8"
  "p2p 1 MiB (per message, window 64)|p2p_bandwidth|1048576|p2p_bandwidth|1048576"
  "all_reduce 8 B|all_reduce|8|all_reduce|8"
  "agree (Open MPI: MPIX_Comm_agree)|agree|0|agree|0"
  "barrier|barrier|0|barrier|0"
)
if [ "$EXTRA_OPS" = 1 ]; then
  ops+=(
    "all_reduce 1 MiB|all_reduce|1048576|all_reduce|1048576"
    "validate_global (vs MPIX_Comm_agree)|validate_global|0|agree|0"
    "shrink (vs MPIX_Comm_shrink + free)|shrink|0|shrink|0"
  )
fi

echo
echo "Medians in µs over $ROUNDS rounds (each round's value: the median of $REPS repetitions);"
echo "ratio = runthrough / Open MPI (below 1: runthrough faster). Between the hosts both use TCP"
echo "over the veth. 'within a host': shm = runthrough's shared memory (RT_TRANSPORT=auto) against"
echo "Open MPI's sm BTL (btl tcp,sm,self); tcp = TCP for every pair on both sides (RT_TRANSPORT=tcp,"
echo "btl tcp,self). Ranks 0..N/2-1 on host A, N/2..N-1 on host B; ranks unbound; p2p is between"
echo "rank 0 (A) and rank 1 (B), at 2 ranks only (as both benchmark programs define it)."
echo
echo "| op | ranks | within a host | runthrough µs | Open MPI µs | ratio | rounds' range: runthrough; Open MPI |"
echo "|---|---:|---|---:|---:|---:|---|"
for entry in "${ops[@]}"; do
  IFS='|' read -r label rt_op rt_bytes om_op om_bytes <<< "$entry"
  for n in $RANK_COUNTS; do
    for mode in $MODES; do
      case $rt_op in p2p_*) [ "$n" = 2 ] || continue ;; esac
      if [ "$n" = 2 ]; then
        [ "$mode" = "$FIRST_MODE" ] || continue
        within="- (1 rank per host)"
      else
        within=$([ "$mode" = tcp ] && echo tcp || echo "shm / sm")
      fi
      rt=$(median_of "$mode" "$n" runthrough "$rt_op" "$rt_bytes")
      om=$(median_of "$mode" "$n" openmpi-ulfm "$om_op" "$om_bytes")
      ratio=$(awk -v a="${rt:-0}" -v b="${om:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }')
      spread="$(range_of "$mode" "$n" runthrough "$rt_op" "$rt_bytes"); $(range_of "$mode" "$n" openmpi-ulfm "$om_op" "$om_bytes")"
      echo "| $label | $n | $within | ${rt:-missing} | ${om:-missing} | $ratio | $spread |"
    done
  done
done
echo
echo "(jobs took $((SECONDS - start)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
