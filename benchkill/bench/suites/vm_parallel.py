"""The "vm" suite's memory measurements of many workloads at once, for the asv suite.

:func:`measure_memory_in_parallel` runs :func:`~benchkill.bench.suites.vm_suite.measure_workload`
for (workload, exec mode) pairs in worker processes side by side, one per core: a
memory figure (a child's own resident memory) does not depend on what else runs, so
``asv run --quick`` measures its 32 variants in half the time.  Run times measured that
way are not figures to report, and the "vm" suite itself measures one variant at a time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from benchkill.bench.model import Record
from benchkill.bench.suites import vm_suite
from benchkill.inputs.workloads import make_workload


def measure_memory_in_parallel(
    pairs: Sequence[tuple[str, str]],
    memory_cfg: str,
    kills: Sequence[str | None],
    *,
    quick: bool = True,
    repeat: int = 3,
    export_dir: Path | None = None,
    workers: int | None = None,
) -> list[list[Record]]:
    """``measure_workload`` of each (workload name, exec mode) pair, with no trace and
    ``reuse_equal_programs``, in ``workers`` processes at once (one per core by default);
    its records, pair by pair.

    For memory only: each distinct program still runs in a child of its own, and its peak
    is that child's resident memory, which the others do not change; but the run times
    (``vm_run_time``, ``vm_build_time``) of children running side by side on a shared
    core are not figures to report.  The workloads are made in the workers
    (:func:`~benchkill.inputs.workloads.make_workload`, ``quick`` parameters).
    """
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    workers = workers or os.cpu_count() or 1
    workers = max(1, min(workers, len(pairs)))
    job = partial(
        _measure_pair,
        memory_cfg=memory_cfg,
        kills=tuple(kills),
        quick=quick,
        repeat=repeat,
        export_dir=export_dir,
    )
    # spawn, not fork: the caller may have TVM loaded, or threads
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(job, pairs))


def _measure_pair(
    pair: tuple[str, str],
    *,
    memory_cfg: str,
    kills: tuple[str | None, ...],
    quick: bool,
    repeat: int,
    export_dir: Path | None,
) -> list[Record]:
    name, exec_mode = pair
    workload = make_workload(name, quick=quick)
    return vm_suite.measure_workload(
        workload,
        exec_mode,
        memory_cfg,
        kills,
        repeat=repeat,
        trace=False,
        export_dir=export_dir,
        reuse_equal_programs=True,
    )
