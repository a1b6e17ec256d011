"""The run loop of ``benchkill run``: cases in order, progress, a record sink, resume.

Every finished case goes at once to a :class:`Sink` (``benchkill run`` gives a
:class:`benchkill.results.recorder.ResultsFile`, which saves it atomically), so an
interrupted run keeps what it measured and a resumed one skips the sink's finished
cases.  A case whose ``run_case`` raises becomes a FAILED record carrying the error, and
the run goes on: one broken case must not cost the measurements of all the others.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import IO, Any, Protocol

from benchkill.bench.model import FAILED, STATUSES, CaseSpec, Record
from benchkill.errors import BenchkillError


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
        records: Sequence[Record],
        seconds: float,
    ) -> None: ...

    def stop(self, outcome: str = "done") -> None: ...


class Sink(Protocol):
    """Where the records of finished cases go (a results file, in ``benchkill run``)."""

    @property
    def quick(self) -> bool: ...

    @property
    def done(self) -> frozenset[str]: ...

    def start(self) -> None: ...

    def add(self, spec: CaseSpec, seconds: float, records: Sequence[Record]) -> None: ...

    def finish(self, finished_at: str) -> Any: ...


def _outcome(records: Sequence[Record]) -> str:
    failed = [r for r in records if r.status == FAILED]
    if failed:
        return f"FAILED: {failed[0].error}"
    return f"ok, {len(records)} record{'s' if len(records) != 1 else ''}"


def clock_text(seconds: float | None) -> str:
    """``1:05`` (minutes:seconds) or ``1:02:05``; ``-:--`` when unknown."""
    if seconds is None:
        return "-:--"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _Eta:
    """Remaining time: the mean time of the cases finished in this run times the
    cases left (cases differ in size, so it is a rough guide that improves as it goes)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def add(self, seconds: float) -> None:
        self.seconds.append(seconds)

    def remaining(self, left: int) -> float | None:
        if not self.seconds:
            return None
        return sum(self.seconds) / len(self.seconds) * left


class PlainProgress:
    """One line per case, for logs and pipes (no terminal control characters)."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.t0 = 0.0
        self.eta = _Eta()
        self.finished = 0
        self.total = 0

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def start(self, total: int, done: int) -> None:
        self.t0 = self.clock()
        self.total, self.finished = total, done
        skipped = f" ({done} already done)" if done else ""
        self._print(f"running {total - done} of {total} cases{skipped}")

    def case_started(self, index: int, total: int, spec: CaseSpec) -> None:
        self._print(f"[{index}/{total}] {spec.key} ...")

    def case_finished(self, index, total, spec, records, seconds) -> None:
        elapsed = self.clock() - self.t0
        self.eta.add(seconds)
        self.finished = index
        eta = clock_text(self.eta.remaining(total - index))
        self._print(
            f"[{index}/{total}] {spec.key}: {_outcome(records)} "
            f"({seconds:.1f} s, elapsed {elapsed:.0f} s, ETA {eta})"
        )

    def stop(self, outcome: str = "done") -> None:
        if outcome != "done":
            elapsed = clock_text(self.clock() - self.t0)
            self._print(f"{outcome} after {self.finished} of {self.total} cases ({elapsed})")


class RichProgress:
    """A progress bar on the terminal, within 80 columns: case k/n, the bar, elapsed
    time, the estimated time left, and as much of the current case's name as fits."""

    #: Width of the bar itself (the case name gets the rest of the line).
    BAR_WIDTH = 16

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.table import Column

        self.console = Console(file=stream)
        self.bar = Progress(
            TextColumn("case {task.completed}/{task.total}", table_column=Column(no_wrap=True)),
            BarColumn(bar_width=self.BAR_WIDTH),
            TimeElapsedColumn(table_column=Column(no_wrap=True)),
            TextColumn("ETA {task.fields[eta]}", table_column=Column(no_wrap=True)),
            TextColumn(
                "{task.description}",
                markup=False,
                table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1),
            ),
            console=self.console,
            transient=False,
            expand=True,
        )
        self.task: Any = None
        self.eta = _Eta()

    def start(self, total: int, done: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("", total=total, completed=done, eta=clock_text(None))

    def case_started(self, index: int, total: int, spec: CaseSpec) -> None:
        self.bar.update(self.task, description=spec.key, refresh=True)

    def case_finished(self, index, total, spec, records, seconds) -> None:
        if any(r.status == FAILED for r in records):
            text = f"{spec.key}: {_outcome(records)}"
            self.bar.console.print(text, style="red", markup=False, highlight=False)
        self.eta.add(seconds)
        eta = clock_text(self.eta.remaining(total - index))
        self.bar.update(self.task, advance=1, eta=eta)

    def stop(self, outcome: str = "done") -> None:
        self.bar.update(
            self.task, description=outcome, eta=clock_text(0 if outcome == "done" else None)
        )
        self.bar.stop()


def make_progress(stream: IO[str] = sys.stderr) -> Progress:
    """A rich bar when ``stream`` is a terminal, plain lines otherwise."""
    isatty = getattr(stream, "isatty", None)
    return RichProgress(stream) if isatty is not None and isatty() else PlainProgress(stream)


def _failed(spec: CaseSpec, error: str) -> Record:
    return Record(
        suite=spec.suite,
        name=spec.name,
        params=dict(spec.params),
        metric="case",
        unit="",
        status=FAILED,
        error=error,
    )


def _check(record: Any) -> Record:
    """A suite's Record, checked: a malformed one raises ValueError."""
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
    return record


def run_case(suite: Any, spec: CaseSpec) -> list[Record]:
    """Run one case; an exception (or a malformed record) becomes one FAILED record."""
    try:
        records = [_check(r) for r in suite.run_case(spec)]
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
    sink: Sink,
    progress: Progress,
    *,
    clock: Callable[[], float] = time.perf_counter,
    now: Callable[[], str] = utc_now,
) -> Any:
    """Run every case of ``suites`` not yet done in ``sink``, adding each when it finishes.

    Returns ``sink.finish(now())`` once all are done.  KeyboardInterrupt propagates after
    the progress display is stopped; the sink then holds every case finished before it.
    """
    pairs = plan(suites, sink.quick)
    done_keys = sink.done
    todo = [(s, spec) for s, spec in pairs if spec.key not in done_keys]
    total, done = len(pairs), len(pairs) - len(todo)
    sink.start()
    progress.start(total, done)
    outcome = "stopped by an error"
    try:
        for index, (suite, spec) in enumerate(todo, start=done + 1):
            progress.case_started(index, total, spec)
            t0 = clock()
            records = run_case(suite, spec)
            seconds = clock() - t0
            sink.add(spec, seconds, records)
            progress.case_finished(index, total, spec, records, seconds)
        outcome = "done"
    except KeyboardInterrupt:
        outcome = "interrupted"
        raise
    finally:
        progress.stop(outcome)
    return sink.finish(now())


def failed_records(records: Iterable[Any]) -> list[Any]:
    """The records that failed unexpectedly (EXPECTED_FAILURE does not count)."""
    return [r for r in records if r.status == FAILED]
