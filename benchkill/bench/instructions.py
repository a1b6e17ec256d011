"""Deterministic instruction counts of single pass applications, under valgrind's callgrind.

A shared 2-core virtual machine moves the time of the same code by 0.5-2x between runs;
it does not move the number of instructions the code executes.  :func:`count` runs
:mod:`benchkill.bench.instructions_child` under ``valgrind --tool=callgrind
--instr-atstart=no``; the child switches counting on around each application of the
pass only (pytest-codspeed's compiled client-request hooks), so one count is one
application, exactly, run after run and process after process, when the child's inputs
are pinned, which this module does:

* the environment is built from scratch (:func:`child_env`): only PATH and HOME are
  inherited, plus the test hooks of :mod:`benchkill.hooks` when set (recorded);
  ``PYTHONHASHSEED=0`` (without it counts move by ~4 million on a 3,000-binding chain),
  one thread for OpenBLAS (numpy's thread pool moved counts by ~7 million), OpenMP and
  TVM, no bytecode writing, no user site, glibc malloc's adaptive thresholds fixed
  (:data:`MALLOC_ENV`: heap-layout effects shrink 4-5x);
* the child imports a copy of the measured ``benchkill`` package in a fresh folder that
  nothing writes to, with ``python -P``: the import system lists sys.path folders, and
  a folder that receives files moves counts;
* callgrind writes into a second folder, the child's working directory.

Measured on this machine (prototype, same method): a 3,000-binding chain is 119,030,620
instructions for benchkill and 218,146,412 for TVM's C++ pass, identical in separate
processes; within one process the repeats differ by ~0.1% (heap state), so runs are
compared by the median of the same repeats; the heap layout alone (objects allocated
before the module) moves the median by up to 0.1%; a real 1% slowdown shows as +0.8-1%.
Counts compare one implementation under one environment; they are not time.

``benchkill run --suite pass --instructions`` records them through
:mod:`benchkill.bench.instruction_records` as ``pass_instructions`` (one sample per
repeat) and ``instructions_vs_tvm``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from benchkill.errors import BenchkillError
from benchkill.hooks import HOOK_ENVS

CHILD_MODULE = "benchkill.bench.instructions_child"
RESULT_PREFIX = "INSTR_RESULT "
LABEL_PREFIX = "benchkill-instr:"
METRIC, RATIO_METRIC, UNIT = "pass_instructions", "instructions_vs_tvm", "instructions"

#: The child's environment besides PATH, HOME and PYTHONPATH.
PINNED_ENV = {
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TVM_NUM_THREADS": "1",
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
}
#: glibc malloc pinned: a fixed mmap threshold, no trimming, a large top pad, one arena.
MALLOC_ENV = {
    "MALLOC_MMAP_THRESHOLD_": "131072",
    "MALLOC_TRIM_THRESHOLD_": "4294967296",
    "MALLOC_TOP_PAD_": "268435456",
    "MALLOC_ARENA_MAX": "1",
}
#: callgrind options besides the output files: nothing counted until the child's first
#: start request; per-function costs only (small dump files).
CALLGRIND_OPTIONS = ("--tool=callgrind", "--instr-atstart=no", "--dump-line=no", "--dump-instr=no")
#: Seconds one child may take per case (a 30,000-binding TVM case takes 1-2 minutes here).
CHILD_TIMEOUT = 1800.0


@dataclass(frozen=True)
class Instrument:
    """valgrind and the client-request hooks, found; :meth:`settings` is what is recorded."""

    valgrind: str
    valgrind_version: str
    hooks: str
    hooks_version: str | None

    def settings(self, env: dict[str, str]) -> dict[str, Any]:
        """The instrument settings a results file records (compare warns when they differ)."""
        hidden = ("PATH", "HOME", "PYTHONPATH")
        return {
            "tool": "callgrind",
            "valgrind": self.valgrind_version,
            "options": list(CALLGRIND_OPTIONS),
            "client_requests": f"pytest-codspeed {self.hooks_version or '?'}",
            "env": {k: v for k, v in sorted(env.items()) if k not in hidden + HOOK_ENVS},
        }


def find_instrument(valgrind: str = "valgrind") -> Instrument:
    """valgrind and pytest-codspeed's hooks, or a BenchkillError saying how to get them."""
    path = shutil.which(valgrind)
    if path is None:
        raise BenchkillError(
            f"valgrind not found ({valgrind!r} is not on PATH): instruction counts need "
            "valgrind's callgrind; install it (Debian/Ubuntu: apt-get install valgrind)"
        )
    done = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    version = done.stdout.strip()
    if done.returncode != 0 or not version.startswith("valgrind"):
        raise BenchkillError(f"{path} --version does not answer like valgrind")
    return Instrument(path, version, hooks_library(), _version("pytest-codspeed"))


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def hooks_library() -> str:
    """Path of pytest-codspeed's compiled hooks, found without importing pytest_codspeed."""
    spec = importlib.util.find_spec("pytest_codspeed")  # locates the package, runs nothing
    if spec is None or not spec.submodule_search_locations:
        raise BenchkillError(
            "pytest-codspeed is not installed: instruction counts use its compiled "
            "callgrind hooks (pip install pytest-codspeed)"
        )
    folder = Path(spec.submodule_search_locations[0]) / "instruments" / "hooks"
    found = sorted(folder.glob("dist_instrument_hooks*.so"))
    if not found:
        raise BenchkillError(f"pytest-codspeed has no compiled hooks in {folder}")
    return str(found[0])


def child_env(code_dir: Path, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The child's whole environment: pinned, plus the test hooks set in ``environ``."""
    environ = os.environ if environ is None else environ
    env = {"PATH": environ.get("PATH", "/usr/bin:/bin"), **PINNED_ENV, **MALLOC_ENV}
    if "HOME" in environ:
        env["HOME"] = environ["HOME"]
    env["PYTHONPATH"] = str(code_dir)
    env.update({k: environ[k] for k in HOOK_ENVS if environ.get(k)})
    return env


def test_hooks(env: dict[str, str]) -> dict[str, str]:
    """The test hooks set in ``env`` (recorded with the counts: they change the code)."""
    return {k: env[k] for k in HOOK_ENVS if env.get(k)}


# --- callgrind's output ------------------------------------------------------------

_TRIGGER = re.compile(r"^desc: Trigger: Client Request: (.*)$")


def parse_dump(path: str | os.PathLike) -> tuple[str | None, int]:
    """(client request label or None, Ir total) of one callgrind output file.

    The count is the ``totals:`` line; the header's ``summary:`` is 0 in every
    per-window dump of valgrind 3.19 with ``--instr-atstart=no``.
    """
    label = events = totals = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger:"):
                m = _TRIGGER.match(line.rstrip("\n"))
                label = m.group(1) if m else None
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = line.split()[1:]
    if not events or events[0] != "Ir":
        raise BenchkillError(f"{path}: expected 'events: Ir ...', got {events!r}")
    if totals is None:
        raise BenchkillError(f"{path}: no 'totals:' line (truncated callgrind output?)")
    return label, int(totals[0])


def collect_counts(
    out_dir: Path, pid: int, repeats: int, cases: int = 1
) -> list[tuple[int, list[int]]]:
    """Per case, (warm-up count, per-repeat counts) from the child's callgrind files in
    ``out_dir`` (labels ``<case>:warmup``, ``<case>:repeat-<i>``)."""
    by_label: dict[str, int] = {}
    for path in sorted(out_dir.glob(f"callgrind.out.{pid}*")):
        label, total = parse_dump(path)
        if label is None or not label.startswith(LABEL_PREFIX):
            continue  # the dump at program termination (empty with --instr-atstart=no)
        key = label[len(LABEL_PREFIX) :]
        if key in by_label:
            raise BenchkillError(f"two callgrind dumps labelled {key!r} in {out_dir}")
        by_label[key] = total
    per_case = []
    for case in range(cases):
        wanted = [f"{case}:warmup"] + [f"{case}:repeat-{i}" for i in range(repeats)]
        missing = [k for k in wanted if k not in by_label]
        if missing:
            raise BenchkillError(
                f"callgrind dumps missing for {missing} (found {sorted(by_label)})"
            )
        per_case.append((by_label[wanted[0]], [by_label[k] for k in wanted[1:]]))
    return per_case


# --- one child -----------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """One child process: the counts of its windows and what it cost."""

    impl: str
    bindings: int
    counts: tuple[int, ...]  # one per repeat, in order
    warmup: int
    wall_seconds: float
    cpu_seconds: float  # user + system of the valgrind process (the child measures it)
    settings: dict[str, Any]  # Instrument.settings of the child's environment
    hooks: dict[str, str]  # test hooks in effect


def _copy_package(target: Path) -> Path:
    """A copy of the running ``benchkill`` package (sources only) under ``target``."""
    import benchkill

    source = Path(benchkill.__file__).resolve().parent
    shutil.copytree(source, target / "benchkill", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def count(
    family: str,
    n_ops: int,
    impl: str,
    repeats: int,
    seed: int = 0,
    instrument: Instrument | None = None,
    environ: dict[str, str] | None = None,
    timeout: float = CHILD_TIMEOUT,
) -> Counts:
    """Instructions of ``repeats`` applications of ``impl``'s pass (after a warm-up) on
    ``generate(family, n_ops, seed)``, in one child process under callgrind."""
    [counts] = count_cases([(family, n_ops, seed)], impl, repeats, instrument, environ, timeout)
    return counts


def count_cases(
    cases: Sequence[tuple[str, int, int]],
    impl: str,
    repeats: int,
    instrument: Instrument | None = None,
    environ: dict[str, str] | None = None,
    timeout: float = CHILD_TIMEOUT,
) -> list[Counts]:
    """:func:`count` of every ``(family, n_ops, seed)`` case, one after the other in one
    child process (``timeout`` seconds per case); one :class:`Counts` per case, whose
    ``wall_seconds`` and ``cpu_seconds`` are the whole child's."""
    instrument = instrument or find_instrument()
    with tempfile.TemporaryDirectory(prefix="benchkill-instr-") as tmp:
        code_dir = _copy_package(Path(tmp) / "code")
        out_dir = Path(tmp) / "out"
        out_dir.mkdir()
        env = child_env(code_dir, environ)
        python = [sys.executable, "-P"] if sys.version_info >= (3, 11) else [sys.executable]
        cmd = [
            instrument.valgrind,
            *CALLGRIND_OPTIONS,
            f"--callgrind-out-file={out_dir}/callgrind.out.%p",
            f"--log-file={out_dir}/valgrind.log",
            *python,
            "-m",
            CHILD_MODULE,
            instrument.hooks,
            impl,
            str(repeats),
            *(f"{family}:{n_ops}:{seed}" for family, n_ops, seed in cases),
        ]
        limit = timeout * max(1, len(cases))
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=out_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise BenchkillError(
                f"instruction count of {impl} timed out after {limit:.0f} s"
            ) from None
        wall = time.perf_counter() - t0
        log_path = out_dir / "valgrind.log"
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if proc.returncode != 0:
            tail = (stderr.strip().splitlines() + log.strip().splitlines())[-3:]
            raise BenchkillError(
                f"instruction count of {impl} failed (exit {proc.returncode}): {' | '.join(tail)}"
            )
        lines = [line for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
        if not lines:
            raise BenchkillError(
                f"instruction child printed no result; stdout ends {stdout[-300:]!r}"
            )
        child = json.loads(lines[-1][len(RESULT_PREFIX) :])
        if not child.get("on_valgrind"):
            raise BenchkillError(f"the instruction child did not run under valgrind ({cmd[0]})")
        per_case = collect_counts(out_dir, int(child["pid"]), repeats, len(cases))
    settings, hooks, cpu = instrument.settings(env), test_hooks(env), float(child["cpu_seconds"])
    return [
        Counts(impl, int(n), tuple(counts), warmup, wall, cpu, settings, hooks)
        for n, (warmup, counts) in zip(child["bindings"], per_case, strict=True)
    ]


def count_all(jobs: Sequence[dict[str, Any]], parallel: int | None = None, counter=count) -> list:
    """``counter`` (:func:`count`, or :func:`count_cases`) of every job (keyword
    arguments), up to ``parallel`` children at once (default: 2 when there are 2 cores or
    more).  Counts do not depend on the load."""
    if parallel is None:
        parallel = min(2, os.cpu_count() or 1)
    if parallel <= 1 or len(jobs) <= 1:
        return [counter(**job) for job in jobs]
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(lambda job: counter(**job), jobs))
