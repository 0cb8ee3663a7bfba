#!/usr/bin/env bash
# The network-namespace tests (SPEC §1's fencing rule across a cut link): crates/rtrun/tests/netns.rs
# with skipping turned into failure. Needs root; installs iproute2 when `ip` is missing. The
# tests create their own namespaces (rt-<pid>-*), and delete them, and end what runs in them,
# whatever happens. Bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

echo; echo "=== netns: packages ==="
if ! command -v ip >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  timeout 45 apt-get update -qq
  timeout 45 apt-get install -y -qq iproute2 >/dev/null
fi
ip -V

echo; echo "=== netns: a cut link between two hosts (3 against 1, 2 against 2); barriers over the two hosts ==="
RT_NETNS_TESTS=require timeout 85 cargo test -p rtrun --test netns
echo
echo "netns tests passed"
