"""Change points over a history of runs: where each measurement's level changed.

The runs of one machine are put in commit order (:func:`order_runs`: the git graph's
topological order when the repository is at hand, else the runs' start times); each
measurement (suite, case, metric) becomes one value per commit, the median of its
runs' medians.  Then:

* **instruction counts** are exact (callgrind counts the same code identically, run
  after run): every change of the value is a change point;
* **times and bytes** are noisy: asv's step detection (``asv.step_detect.detect_steps``,
  a Potts model fitted with an L1 cost, so robust to outliers) splits the series into
  levels, and a boundary is a change point when its levels differ beyond the case's
  threshold (the metric kind's default factor, bytes' tolerance, or the policy's).

asv's implementation was chosen over Apache Otava's E-Divisive means: asv is already a
dependency of benchkill, is pure Python, and its L1 Potts fit is what asv's own
regressions page uses; Otava would bring its own dependency tree (numpy, scipy,
signal-processing-algorithms and more) for a second algorithm on the same data.

A change point names the commit where the new level starts, the levels before and after
and their factor, and its verdict (``regression`` or ``improvement`` in the metric's
better direction; ``acknowledged`` when the policy accepts it at that commit).
Classification only; ``benchkill history`` prints.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkill.bench.model import OK, label
from benchkill.reporting.policy import NO_POLICY, Policy
from benchkill.reporting.verdicts import (
    ACKNOWLEDGED,
    BYTES,
    BYTES_FLOOR,
    BYTES_RELATIVE,
    DEFAULT_FACTORS,
    IMPROVEMENT,
    INSTRUCTIONS,
    REGRESSION,
    better_direction,
    metric_kind,
)
from benchkill.results.store import ResultRecord, Results

Run = tuple[Path, Results]


@dataclass(frozen=True)
class ChangePoint:
    """One change of a measurement's level, at the commit where the new level starts."""

    case: str  # suite:name[params]
    metric: str
    unit: str
    commit: str  # as the runs (or the git graph) name it
    position: int  # index of that commit in the ordered history
    before: float
    after: float
    verdict: str  # REGRESSION, IMPROVEMENT or ACKNOWLEDGED
    exact: bool
    record: ResultRecord  # the first record of the new level (for figures)
    reason: str | None = None  # the acknowledgement's

    @property
    def factor(self) -> float:
        """after / before (inf when before is 0)."""
        if self.before == 0:
            return 1.0 if self.after == 0 else math.inf
        return self.after / self.before


@dataclass(frozen=True)
class History:
    """The change points of ordered runs, and whether the newest level is a regression."""

    commits: tuple[str, ...]  # in order, one per position
    order: str  # "git graph" or "start time"
    changes: tuple[ChangePoint, ...]
    series: int  # measurements examined (two or more commits)

    @property
    def failing(self) -> list[ChangePoint]:
        """The regressions that start the newest level of their measurement."""
        last: dict[tuple[str, str], ChangePoint] = {}
        for c in self.changes:
            last[(c.case, c.metric)] = c
        return [c for c in last.values() if c.verdict == REGRESSION]

    @property
    def exit_code(self) -> int:
        return 1 if self.failing else 0


def _commit(run: Results) -> str:
    return run.machine.git_commit or "nogit"


def order_runs(runs: Sequence[Run], graph: Sequence[str] | None) -> tuple[list[Run], str]:
    """``runs`` in commit order and how it was found.  With ``graph`` (full shas, oldest
    first) every run whose commit it holds is placed by it, runs of one commit by start
    time; without it, or when a run's commit is not in it, by start time alone."""
    by_start = sorted(runs, key=lambda r: (r[1].settings.started_at, str(r[0])))
    if not graph:
        return by_start, "start time"
    index: dict[str, int] = {}
    for i, sha in enumerate(graph):
        for n in (7, 8, 9, 10, 11, 12, 40):
            index.setdefault(sha[:n], i)
    positions = [index.get(_commit(r)) for _, r in by_start]
    if any(p is None for p in positions):
        return by_start, "start time"
    ordered = sorted(zip(positions, range(len(by_start)), by_start, strict=True))
    return [run for _, _, run in ordered], "git graph"


def _levels(values: list[float], exact: bool) -> list[tuple[int, float]]:
    """(first position, level) of each level of ``values``."""
    if exact:
        out = [(0, values[0])]
        for i, v in enumerate(values[1:], 1):
            if v != out[-1][1]:
                out.append((i, v))
        return out
    from asv.step_detect import detect_steps

    return [
        (left, statistics.median(values[left:right])) for left, right, *_ in detect_steps(values)
    ]


def _changed(kind: str, before: float, after: float, threshold: Any) -> bool:
    if kind == BYTES:
        tolerance = threshold.bytes_tolerance if threshold and threshold.bytes_tolerance else None
        if tolerance is None:
            relative = (
                BYTES_RELATIVE if not threshold or not threshold.factor else threshold.factor - 1
            )
            tolerance = max(relative * abs(before), BYTES_FLOOR)
        return abs(after - before) > tolerance
    factor = threshold.factor if threshold and threshold.factor else DEFAULT_FACTORS[kind]
    if before == 0 or after == 0:
        return before != after
    ratio = after / before
    return ratio > factor or ratio < 1 / factor


def find_changes(
    runs: Sequence[Run], graph: Sequence[str] | None, policy: Policy = NO_POLICY
) -> History:
    """The :class:`History` of ``runs`` (one machine's), ordered by ``graph`` if given."""
    ordered, how = order_runs(runs, graph)
    commits: list[str] = []
    for _, run in ordered:
        if not commits or commits[-1] != _commit(run):
            commits.append(_commit(run))
    # position of each run: runs of one commit next to each other share it
    series: dict[tuple, dict[int, list[ResultRecord]]] = defaultdict(lambda: defaultdict(list))
    position = -1
    previous = None
    for _, run in ordered:
        if _commit(run) != previous:
            position, previous = position + 1, _commit(run)
        for r in run.records:
            if r.status == OK and r.summary is not None:
                series[r.key][position].append(r)
    changes = []
    examined = 0
    for by_position in series.values():
        if len(by_position) < 2:
            continue
        examined += 1
        points = sorted(by_position.items())
        first = points[0][1][0]
        case, metric = label(first.suite, first.name, first.params), first.metric
        kind = metric_kind(first.unit, first.extra)
        exact = kind == INSTRUCTIONS
        values = [statistics.median(r.summary.median for r in rs) for _, rs in points]
        levels = _levels(values, exact)
        threshold = policy.threshold(case)
        lower = better_direction(first.metric, first.unit, first.extra) == "lower"
        for (_, before), (start, after) in zip(levels, levels[1:], strict=False):
            if not exact and not _changed(kind, before, after, threshold):
                continue
            worse = after > before if lower else after < before
            pos, records = points[start]
            commit = commits[pos]
            verdict, reason = (REGRESSION if worse else IMPROVEMENT), None
            if worse:
                full = records[0].git_commit or commit
                ack = policy.acknowledgement(case, metric, full)
                if ack is not None:
                    verdict, reason = ACKNOWLEDGED, ack.reason
            changes.append(
                ChangePoint(
                    case,
                    metric,
                    first.unit,
                    commit,
                    pos,
                    before,
                    after,
                    verdict,
                    exact,
                    records[0],
                    reason,
                )
            )
    changes.sort(key=lambda c: (c.position, c.case, c.metric))
    return History(tuple(commits), how, tuple(changes), examined)
