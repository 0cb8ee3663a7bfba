# SPDX-License-Identifier: MIT OR Apache-2.0
"""The runthrough package and mpi4py on runthrough, each program run under target/release/rtrun
(as a user would), with kills where the test is about failures. Every job is bounded twice:
rtrun's --timeout and the subprocess's. Run from the repository root after python/setup.sh:

    target/py/venv/bin/python -m pytest -v python/tests
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RTRUN = Path(os.environ.get("RTRUN", ROOT / "target" / "release" / "rtrun"))
PROGRAMS = Path(__file__).resolve().parent / "programs"
EXAMPLES = ROOT / "python" / "examples"
JOB_TIMEOUT = 90


def rtrun(ranks, program, *args, kills=()):
    command = [str(RTRUN), "-n", str(ranks), "--tag-output", "--strict-faults",
               "--timeout", str(JOB_TIMEOUT)]
    for kill in kills:
        command += ["--kill", kill]
    command += [sys.executable, str(program), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=JOB_TIMEOUT + 30)
    output = done.stdout + done.stderr
    print(" ".join(command))
    print(output)
    return done.returncode, output


def died(output, rank):
    """Whether rtrun's report says that `rank` died by one of its kills."""
    return re.search(rf"^rtrun: rank {rank}: .*(injected|signal|killed)", output, re.M) is not None


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_mpi4py_basic_paths(ranks):
    status, output = rtrun(ranks, PROGRAMS / "basics.py")
    assert status == 0, output
    assert "[0] No Errors" in output


def test_views_new_old_and_err_size_with_two_kills():
    status, output = rtrun(4, PROGRAMS / "views.py",
                           kills=["2@validate_global:2", "3@barrier:1"])
    assert status == 0, output
    assert "[0] No Errors" in output
    assert died(output, 2) and died(output, 3), output


def test_views_fail_when_the_kill_is_missing():
    """The views program checks what it sees: without rank 2's kill, its assertions fail (so
    the test above would catch a kill that changed nothing)."""
    status, output = rtrun(4, PROGRAMS / "views.py", kills=["3@barrier:1"])
    assert status != 0, output
    assert "AssertionError" in output


def test_mpi4py_fault_tolerance_methods_through_a_kill():
    status, output = rtrun(4, PROGRAMS / "ulfm.py", kills=["1@barrier:1"])
    assert status == 0, output
    assert "[0] No Errors" in output
    assert died(output, 1), output


def test_bag_of_tasks_example_survives_two_kills():
    # Both kills land while the workers are still working, so G must hold both: a worker makes
    # three calls at start-up and two per task, and the master hands each one task at the start,
    # so call 5 (its first result) and call 6 (its second receive) come in every worker before
    # its final validate_global, whatever share of the tasks a busy host gives it (rank 4 once
    # got 13 of 120 and its call 30 came after the agreement; 2@call:9 needs 3 tasks).
    status, output = rtrun(6, EXAMPLES / "bag_of_tasks.py", "--tasks", "120",
                           kills=["2@call:5", "4@call:6"])
    assert status == 0, output
    assert re.search(r"checksum 0x[0-9a-f]+, without MPI 0x[0-9a-f]+: equal", output), output
    assert re.search(r"G = \[2, 4\]", output), output
    assert died(output, 2) and died(output, 4), output


def test_bag_of_tasks_example_without_failures():
    status, output = rtrun(3, EXAMPLES / "bag_of_tasks.py", "--tasks", "30")
    assert status == 0, output
    assert "equal" in output and "G = []" in output, output


def test_refuses_an_mpi4py_not_linked_with_runthrough(tmp_path):
    """Beside an mpi4py that did not load librunthrough_c.so (here a stand-in module), the
    package refuses to import, naming the library and how to build mpi4py."""
    fake = tmp_path / "mpi4py"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "MPI.py").write_text("class Exception(RuntimeError):\n    pass\nclass Comm:\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-c", "import runthrough"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode != 0
    assert "ImportError" in done.stderr and "librunthrough_c.so" in done.stderr, done.stderr
    assert "MPICC=target/release/rtcc" in done.stderr, done.stderr


def test_store_restores_the_dead_rank_s_slot_at_its_buddy():
    status, output = rtrun(4, PROGRAMS / "store.py", kills=["2@barrier:1"])
    assert status == 0, output
    assert "[0] No Errors" in output
    assert died(output, 2), output
