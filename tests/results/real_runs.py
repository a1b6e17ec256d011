"""Real ``benchkill run`` processes of a small fake suite, for the concurrency and fault tests.

The suite (:data:`SUITE`, written into the test's directory) has ``BENCHKILL_FAKE_CASES``
cases; each takes ``BENCHKILL_FAKE_SECONDS`` of real time inside a work directory of
:func:`benchkill.execution.child.work_dir` (as a VM measurement does, with a file in it) and
records its process id and a random token, so a test can tell which run measured a case
and whether it was measured twice.  A launched process waits for the file ``go`` before
it runs the command, so that two of them can be started together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The source tree whose benchkill the processes run.
PROJECT = Path(__file__).resolve().parents[2]

SUITE = """
import os, random, time
from benchkill.bench.model import CaseSpec, Record
from benchkill.execution.child import work_dir

NAME = "fake"

def cases(quick):
    n = int(os.environ["BENCHKILL_FAKE_CASES"])
    return [CaseSpec("fake", "case", {"i": i}) for i in range(n)]

def run_case(spec):
    with work_dir("benchkill-fake-") as work:
        (work / "module.py").write_bytes(b"#" * 65536)
        time.sleep(float(os.environ["BENCHKILL_FAKE_SECONDS"]))
    extra = {"pid": os.getpid(), "token": random.getrandbits(64)}
    t = Record("fake", "case", spec.params, "t", "seconds", (0.01, 0.011, 0.012), extra=extra)
    m = Record("fake", "case", spec.params, "mem", "bytes", (1024.0,), extra=extra)
    return [t, m]
"""

LAUNCH = """
import os, sys, time
go = os.path.join(os.environ["BENCHKILL_FAKE_DIR"], "go")
while not os.path.exists(go):
    time.sleep(0.002)
import benchkill.bench.suites as suites
suites.SUITES.clear()
suites.SUITES["fake"] = "benchkill_fake_run_suite"
from benchkill.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def prepare(directory: Path) -> None:
    """Write the fake suite into ``directory`` (the processes import it from there)."""
    (directory / "benchkill_fake_run_suite.py").write_text(SUITE)


def launch(
    directory: Path, argv: list[str], cases: int, seconds: float, tmp: Path, cwd: Path
) -> subprocess.Popen:
    """``benchkill <argv>`` on the fake suite, started once ``directory/go`` exists, with
    ``tmp`` as its temporary directory."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(directory), str(PROJECT)]),
        PYTHONWARNINGS="ignore",
        BENCHKILL_FAKE_DIR=str(directory),
        BENCHKILL_FAKE_CASES=str(cases),
        BENCHKILL_FAKE_SECONDS=str(seconds),
        TMPDIR=str(tmp),
    )
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
