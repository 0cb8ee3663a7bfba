#!/usr/bin/env python3
"""Runs one CI step's command and leaves nothing of it behind.

Usage: reap.py COMMAND [ARG...]

The wrapper makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every process
the command starts and then orphans is re-parented to it rather than to init. When the command
ends (normally, or because `timeout` sent this wrapper SIGTERM, which it passes on), whatever is
still running below the wrapper is listed (pid, age, CPU time, command line) and killed with
SIGKILL, so a stray rank spinning on a core cannot slow the steps after it; the listing says
which test left it. The wrapper exits with the command's status (128 + signal if a signal
ended it); leftovers alone do not fail the step.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def reap_exited():
    """Collects the exit status of every child that has ended (orphans re-parented to us end
    as zombies until we do)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children(pid):
    """The live pids whose parent is `pid`, read from /proc (zombies are left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != b"Z":
            found.append(int(entry))
    return found


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rfind(b")") + 2 :].split()
        ticks = os.sysconf("SC_CLK_TCK")
        cpu = (int(fields[11]) + int(fields[12])) / ticks
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(fields[19]) / ticks
        return f"pid {pid}, running {age:.0f} s, {cpu:.1f} s of CPU: {cmdline[:300]}"
    except OSError:
        return f"pid {pid} (gone)"


def main():
    if len(sys.argv) < 2:
        print("usage: reap.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("reap.py: cannot become a child subreaper; leftovers go unreported", file=sys.stderr)
    child = subprocess.Popen(sys.argv[1:])

    def forward(signum, _frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    status = child.wait()

    me = os.getpid()
    reported = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reap_exited()
        left = children(me)
        if not left:
            break
        for pid in left:
            if pid not in reported:
                reported.add(pid)
                print(f"=== left running by this step, killed: {describe(pid)}", flush=True)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Killing a process can re-parent its own children to us: look again.
        time.sleep(0.05)
    if reported:
        print(f"=== {len(reported)} process(es) outlived this step's command", flush=True)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
