#!/usr/bin/env bash
# CI step for rsmpi: the `mpi` crate (rsmpi) built against runthrough's C library through
# rtcc (rsmpi/run.sh): this repository's crate rsmpi/ and its tests, rsmpi programs under rtrun
# with a rank killed that must survive it, then rsmpi's own examples under rtrun on 2 and 3
# ranks. bindgen (in rsmpi's build) needs libclang: a machine without it gets libclang-dev from
# apt first.
# Bounded: .ci/run gives the step 90 s (its packages step has installed libclang by then; by
# hand, a missing libclang is installed here, within 40 + 100 s). The release build of the C
# library and rtrun is already done by an earlier step (60 s when not); run.sh takes about 45 s
# from a clean target directory on this 2-core machine (two builds of rsmpi: its shim, its
# bindings), 10 s warm, and each rtrun job in it has --timeout 60 and takes under a second.
# Prints its duration.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if ! ldconfig -p | grep -Eq 'libclang(-[0-9.]+)?\.so'; then
  echo "no libclang (bindgen needs it): installing libclang-dev"
  export DEBIAN_FRONTEND=noninteractive
  timeout 40 apt-get update -qq
  timeout 100 apt-get install -y -qq libclang-dev >/dev/null
fi
timeout 60 cargo build --release -p runthrough-c -p rtrun
timeout 85 bash rsmpi/run.sh
echo "rsmpi step: $(($(date +%s) - start)) s"
