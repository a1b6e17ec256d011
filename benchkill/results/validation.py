"""What loading a results file checks beyond its JSON schema: impossible values.

A results file can be well-formed and still wrong: a negative time, a stored summary that
is not the summary of its samples, all-zero times (whose ratio is infinite), a parameter
of a type no suite writes (``bindings = "lots"``), a memory timeline that is not a list of
byte counts, the same case or measurement listed twice.  Reports built on such data
would be wrong, or crash; so :func:`check_record` and :func:`check_results` reject them,
each with one line naming the record.  The parameter and ``extra`` keys checked are the
ones the suites write and :mod:`benchkill.reporting` reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from benchkill.bench.model import label
from benchkill.errors import BenchkillError
from benchkill.stats import summarize

#: Units whose samples are amounts: never negative.  Times also are never all zero.
NON_NEGATIVE_UNITS = ("seconds", "s", "sec", "bytes", "B", "ratio")
TIME_UNITS = ("seconds", "s", "sec")

#: Relative agreement required between a stored summary and the summary of its samples.
SUMMARY_TOLERANCE = 1e-9


class Invalid(BenchkillError):
    """A value no benchkill run can have produced; the message names where it is."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _byte_counts(value: Any) -> bool:
    return isinstance(value, list) and all(_is_number(v) and v >= 0 for v in value)


def _text(value: Any) -> bool:
    return isinstance(value, str)


#: Parameter name -> (check, what it must be).  The pass suite's and the vm suite's
#: parameters, as plot, targets and report read them.
PARAMS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bindings": (_positive_int, "a positive integer"),
    "n_ops": (_positive_int, "a positive integer"),
    "seed": (_count, "a non-negative integer"),
    "family": (_text, "a string"),
    "impl": (_text, "a string"),
    "workload": (_text, "a string"),
    "exec_mode": (_text, "a string"),
    "memory_cfg": (_text, "a string"),
    "kill": (lambda v: v is None or isinstance(v, str), "a string or null"),
}

#: ``extra`` key -> (check, what it must be): the details the reports read.
EXTRA: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bindings_actual": (_positive_int, "a positive integer"),
    "static_live_bytes": (_byte_counts, "a list of non-negative byte counts"),
    "measured_bytes": (_byte_counts, "a list of non-negative byte counts"),
    "deterministic": (lambda v: isinstance(v, bool), "true or false"),
    "better": (lambda v: v in ("lower", "higher"), '"lower" or "higher"'),
}


def describe(where: str, record: Any) -> str:
    """``records[3] (pass:chain[bindings=100] pass_time)``: where a record is, and what."""
    try:
        what = label(record.suite, record.name, record.params, record.metric)
    except Exception:  # noqa: BLE001 - a description must never fail
        what = "?"
    return f"{where} ({what})"


def _close(a: float, b: float, scale: float) -> bool:
    return math.isclose(a, b, rel_tol=SUMMARY_TOLERANCE, abs_tol=SUMMARY_TOLERANCE * scale)


def check_record(record: Any, where: str) -> None:
    """Reject a record whose values no run can produce (an :class:`Invalid` naming it)."""
    at = describe(where, record)
    for name, value in record.params.items():
        rule = PARAMS.get(name)
        if rule is not None and not rule[0](value):
            raise Invalid(f"{at}: params.{name} must be {rule[1]}, not {value!r}"[:300])
    for name, value in record.extra.items():
        rule = EXTRA.get(name)
        if rule is not None and not rule[0](value):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise Invalid(f"{at}: extra.{name} must be {rule[1]}, not {shown}")
    samples: Sequence[float] = record.samples
    if record.unit in NON_NEGATIVE_UNITS:
        negative = next((v for v in samples if v < 0), None)
        if negative is not None:
            raise Invalid(f"{at}: negative sample {negative!r} ({record.unit} cannot be negative)")
    if record.unit in TIME_UNITS and samples and max(samples) == 0:
        raise Invalid(f"{at}: every sample is 0 seconds, which is no measured time")
    summary = record.summary
    if summary is None:
        return
    if not samples:
        raise Invalid(f"{at}: a summary without samples")
    if summary.n != len(samples):
        raise Invalid(f"{at}: summary.n is {summary.n} but there are {len(samples)} samples")
    expected = summarize(samples)
    scale = max(abs(v) for v in samples) or 1.0
    for name in ("min", "median", "q1", "q3", "mean", "std"):
        stored, computed = getattr(summary, name), getattr(expected, name)
        if not _close(stored, computed, scale):
            raise Invalid(
                f"{at}: stored summary.{name} {stored!r} is not that of the samples ({computed!r})"
            )


def check_records(records: Sequence[Any], path: Any) -> None:
    """:func:`check_record` of each record of a converted file (asv, pytest-benchmark):
    the first impossible value is one BenchkillError naming the file."""
    try:
        for i, record in enumerate(records):
            check_record(record, f"measurement {i + 1}")
    except Invalid as exc:
        raise BenchkillError(f"{path}: impossible value: {exc}") from None


def _iso(value: str | None, where: str) -> None:
    if value is None:
        return
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(f"{where}: {value!r} is not an ISO 8601 time") from None


def check_results(results: Any) -> None:
    """Reject impossible values of a whole run: every record (:func:`check_record`), times
    that are not ISO 8601, negative case durations or machine sizes, and cases or
    measurements listed twice."""
    settings, machine = results.settings, results.machine
    _iso(settings.started_at, "settings.started_at")
    _iso(settings.finished_at, "settings.finished_at")
    for i, when in enumerate(settings.resumed_at):
        _iso(when, f"settings.resumed_at[{i}]")
    if machine.cores is not None and machine.cores < 1:
        raise Invalid(f"machine.cores: {machine.cores} is not a number of cores")
    if machine.memory_bytes is not None and machine.memory_bytes < 0:
        raise Invalid(f"machine.memory_bytes: {machine.memory_bytes} is negative")
    cases: dict[str, int] = {}
    for i, case in enumerate(results.cases):
        if case.seconds < 0:
            raise Invalid(f"cases[{i}] ({case.key}): negative duration {case.seconds!r} s")
        if case.key in cases:
            raise Invalid(
                f"cases[{i}]: case {case.key} is listed twice (also cases[{cases[case.key]}])"
            )
        cases[case.key] = i
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, record in enumerate(results.records):
        check_record(record, f"records[{i}]")
        if record.key in seen:
            at, first = describe(f"records[{i}]", record), seen[record.key]
            raise Invalid(f"{at}: the same measurement as records[{first}]")
        seen[record.key] = i
