"""The "vm" suite's memory measurements of many workloads at once, for the asv suite.

:func:`measure_memory_in_parallel` runs
:func:`~benchkill.bench.suites.vm_suite.measure_workload` for (workload, exec mode) pairs
side by side: one child process per core (task :func:`pairs_task` of
:mod:`benchkill.execution.child`), each measuring its share of the pairs: a memory figure (a
measuring child's own resident memory) does not depend on what else runs, so ``asv run
--quick`` measures its 32 variants in half the time.  Run times measured that way are not
figures to report, and the "vm" suite itself measures one variant at a time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchkill.bench.model import Record
from benchkill.errors import BenchkillError
from benchkill.execution.child import kill_running_children, run_task, work_dir

#: Seconds a child may take per pair it measures (the variants' builds and runs).
PAIR_TIMEOUT = 1200.0


def measure_memory_in_parallel(
    pairs: Sequence[tuple[str, str]],
    memory_cfg: str,
    kills: Sequence[str | None],
    *,
    quick: bool = True,
    repeat: int = 3,
    export_dir: Path | None = None,
    workers: int | None = None,
    timeout: float = PAIR_TIMEOUT,
) -> list[list[Record]]:
    """``measure_workload`` of each (workload name, exec mode) pair, with no trace and
    ``reuse_equal_programs``, ``workers`` pairs at once (one per core by default); its
    records, pair by pair.  A failing child raises BenchkillError naming its pairs.

    For memory only: the distinct programs of a pair run in one child of their own
    (``measure_workload(..., one_child=True)``), and a peak is that child's resident
    memory, which the other children do not change; but the run times
    (``vm_run_time``, ``vm_build_time``) of children running side by side on a shared
    core are not figures to report.  The workloads are made in the children
    (:func:`~benchkill.inputs.workloads.make_workload`, ``quick`` parameters).
    """
    workers = workers or os.cpu_count() or 1
    workers = max(1, min(workers, len(pairs)))
    request = {
        "memory_cfg": memory_cfg,
        "kills": list(kills),
        "quick": bool(quick),
        "repeat": int(repeat),
        "export_dir": None if export_dir is None else os.fspath(Path(export_dir).absolute()),
    }

    def measure(chunk: list[tuple[str, str]]) -> list[list[Record]]:
        with work_dir("benchkill-vmpairs-") as work:
            task = "benchkill.bench.suites.vm_parallel:pairs_task"
            # the child makes the workloads: a real model needs torch there
            outcome = run_task(
                task, {**request, "pairs": chunk}, work, timeout * len(chunk), torch=True
            )
        result = outcome.result
        if result is None or "records" not in result:
            why = outcome.failure() if result is None else result.get("error")
            names = ", ".join(f"{name} ({exec_mode})" for name, exec_mode in chunk)
            raise BenchkillError(f"vm workloads {names}: {why}")
        return [[_record(r) for r in records] for records in result["records"]]

    # one child per worker (TVM imported once in each), the pairs dealt out in turn; the
    # threads only wait for their children
    chunks = [list(pairs[i::workers]) for i in range(workers)]
    try:
        with ThreadPoolExecutor(workers) as pool:
            measured = list(pool.map(measure, chunks))
    except BaseException:
        kill_running_children()  # interrupted, or a child failed: none left running
        raise
    out: list[list[Record]] = [[] for _ in pairs]
    for i, records in enumerate(measured):
        out[i::workers] = records
    return out


def pairs_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of :func:`measure_memory_in_parallel`: the records of its pairs."""
    from benchkill.bench.suites.vm_suite import measure_workload
    from benchkill.inputs.workloads import make_workload

    export_dir = request["export_dir"]
    out = []
    for name, exec_mode in request["pairs"]:
        records = measure_workload(
            make_workload(name, quick=request["quick"]),
            exec_mode,
            request["memory_cfg"],
            request["kills"],
            repeat=request["repeat"],
            trace=False,
            export_dir=None if export_dir is None else Path(export_dir),
            reuse_equal_programs=True,
            one_child=True,
        )
        out.append([asdict(r) for r in records])
    return {"records": out}


def _record(fields: dict[str, Any]) -> Record:
    return Record(**{**fields, "samples": tuple(fields["samples"])})
