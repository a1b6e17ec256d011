"""The run loop of ``benchkill run``: cases in order, progress, incremental save, resume.

Every finished case is written to the results file at once (atomically), so an
interrupted run keeps what it measured and ``--resume`` completes it.  A case whose
``run_case`` raises becomes a FAILED record carrying the error, and the run goes on:
one broken case must not cost the measurements of all the others.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import IO, Any, Protocol

from benchkill.bench.model import FAILED, STATUSES, CaseSpec, Record
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results, save


def utc_now() -> str:
    """The current time, ISO 8601 in UTC to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Progress(Protocol):
    """What the runner reports while it works (a rich bar or plain lines)."""

    def start(self, total: int, done: int) -> None: ...

    def case_started(self, index: int, total: int, spec: CaseSpec) -> None: ...

    def case_finished(
        self,
        index: int,
        total: int,
        spec: CaseSpec,
        records: Sequence[ResultRecord],
        seconds: float,
    ) -> None: ...

    def stop(self) -> None: ...


def _outcome(records: Sequence[ResultRecord]) -> str:
    failed = [r for r in records if r.status == FAILED]
    if failed:
        return f"FAILED: {failed[0].error}"
    return f"ok, {len(records)} record{'s' if len(records) != 1 else ''}"


class PlainProgress:
    """One line per case, for logs and pipes (no terminal control characters)."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.t0 = 0.0

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def start(self, total: int, done: int) -> None:
        self.t0 = self.clock()
        skipped = f" ({done} already done)" if done else ""
        self._print(f"running {total - done} of {total} cases{skipped}")

    def case_started(self, index: int, total: int, spec: CaseSpec) -> None:
        self._print(f"[{index}/{total}] {spec.key} ...")

    def case_finished(self, index, total, spec, records, seconds) -> None:
        elapsed = self.clock() - self.t0
        self._print(
            f"[{index}/{total}] {spec.key}: {_outcome(records)} "
            f"({seconds:.1f} s, elapsed {elapsed:.0f} s)"
        )

    def stop(self) -> None:
        pass


class RichProgress:
    """A progress bar on the terminal: case k of n, the current case, elapsed time."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream)
        self.bar = Progress(
            TextColumn("case {task.completed}/{task.total}"),
            BarColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}", markup=False),
            console=self.console,
            transient=False,
        )
        self.task: Any = None

    def start(self, total: int, done: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("", total=total, completed=done)

    def case_started(self, index: int, total: int, spec: CaseSpec) -> None:
        self.bar.update(self.task, description=spec.key, refresh=True)

    def case_finished(self, index, total, spec, records, seconds) -> None:
        if any(r.status == FAILED for r in records):
            text = f"{spec.key}: {_outcome(records)}"
            self.bar.console.print(text, style="red", markup=False, highlight=False)
        self.bar.advance(self.task)

    def stop(self) -> None:
        self.bar.update(self.task, description="done")
        self.bar.stop()


def make_progress(stream: IO[str] = sys.stderr) -> Progress:
    """A rich bar when ``stream`` is a terminal, plain lines otherwise."""
    isatty = getattr(stream, "isatty", None)
    return RichProgress(stream) if isatty is not None and isatty() else PlainProgress(stream)


def _failed(spec: CaseSpec, error: str) -> ResultRecord:
    return ResultRecord(
        case=spec.key,
        suite=spec.suite,
        name=spec.name,
        params=dict(spec.params),
        metric="case",
        unit="",
        status=FAILED,
        error=error,
    )


def _check(record: Any, spec: CaseSpec) -> ResultRecord:
    """Turn a suite's Record into a stored record; a malformed one raises ValueError."""
    if not isinstance(record, Record):
        raise ValueError(f"run_case returned {type(record).__name__}, not a Record")
    if record.status not in STATUSES:
        raise ValueError(f"record {record.metric!r} has unknown status {record.status!r}")
    for value in record.samples:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"record {record.metric!r} has a non-numeric sample {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"record {record.metric!r} has a non-finite sample {value!r}")
    try:
        json.dumps([record.params, record.extra], allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"record {record.metric!r} is not JSON-serialisable: {exc}") from None
    return ResultRecord.from_record(record, spec.key)


def run_case(suite: Any, spec: CaseSpec) -> list[ResultRecord]:
    """Run one case; an exception (or a malformed record) becomes one FAILED record."""
    try:
        records = [_check(r, spec) for r in suite.run_case(spec)]
    except Exception as exc:  # noqa: BLE001 - a broken case must not stop the run
        message = " ".join(str(exc).split()) or "(no message)"
        return [_failed(spec, f"{type(exc).__name__}: {message}")]
    return records


def plan(suites: Sequence[Any], quick: bool) -> list[tuple[Any, CaseSpec]]:
    """All (suite, case) pairs in order; duplicate case keys are a suite bug."""
    pairs = []
    seen: set[str] = set()
    for suite in suites:
        for spec in suite.cases(quick):
            if spec.key in seen:
                raise BenchkillError(f"suite {suite.NAME!r} lists case {spec.key} twice")
            seen.add(spec.key)
            pairs.append((suite, spec))
    return pairs


def run(
    suites: Sequence[Any],
    results: Results,
    path: Any,
    progress: Progress,
    *,
    clock: Callable[[], float] = time.perf_counter,
    now: Callable[[], str] = utc_now,
) -> Results:
    """Run every case of ``suites`` not yet in ``results``, saving to ``path`` after each.

    Returns the completed results (``settings.finished_at`` set).  KeyboardInterrupt
    propagates after the progress display is stopped; the file then holds every case
    finished before it.
    """
    pairs = plan(suites, results.settings.quick)
    todo = [(s, spec) for s, spec in pairs if spec.key not in results.done]
    total, done = len(pairs), len(pairs) - len(todo)
    save(results, path)
    progress.start(total, done)
    try:
        for index, (suite, spec) in enumerate(todo, start=done + 1):
            progress.case_started(index, total, spec)
            t0 = clock()
            records = run_case(suite, spec)
            seconds = clock() - t0
            results = results.with_case(spec, seconds, records)
            save(results, path)
            progress.case_finished(index, total, spec, records, seconds)
    finally:
        progress.stop()
    results = replace(results, settings=replace(results.settings, finished_at=now()))
    save(results, path)
    return results


def failed_records(results: Results) -> list[ResultRecord]:
    """Records that failed unexpectedly (EXPECTED_FAILURE does not count)."""
    return [r for r in results.records if r.status == FAILED]
