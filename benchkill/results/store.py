"""The results file: frozen dataclasses, their JSON form, atomic save and checked load.

A results file holds one run: the machine it ran on, the run's settings, the cases
finished so far (so that ``--resume`` can skip them) and one record per measured
metric with its raw samples, summary statistics and the git commit of the code that
measured it.  It is rewritten atomically after every case (temporary file +
``os.replace``), so an interrupted run keeps every finished case and a reader never sees
half a file; a new file is created exclusively (``os.link``), never over another one.
Loading checks what the JSON schema cannot (:mod:`benchkill.results.validation`).
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchkill.bench.model import STATUSES, CaseSpec, Machine, Record
from benchkill.errors import BenchkillError
from benchkill.results.atomic import write_atomic
from benchkill.results.validation import Invalid, check_results
from benchkill.stats import Summary

# Version of the results file format, independent of the package version.
# Change it whenever a reader of the old format would misread the new one.
# History:
# 1 (benchkill 0.1.0): machine, settings, cases, records with samples and summary.
# 2: each record has ``git_commit`` and ``git_dirty``, the state of the code that measured
#    it (a run resumed with --allow-code-change mixes them; ``machine`` keeps the state
#    the run started with).  Version 1 files still load, their records' fields as None
#    (unknown: version 1 rewrote ``machine.git_commit`` on every resume).
SCHEMA_VERSION = 2
#: The versions :func:`from_dict` reads.
READABLE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class RunSettings:
    """How the run was started.  Times are ISO 8601 in UTC; ``finished_at`` is None
    while the run is incomplete (interrupted, or still going)."""

    suites: tuple[str, ...]
    quick: bool
    command: tuple[str, ...]
    started_at: str
    finished_at: str | None = None
    resumed_at: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseRun:
    """A finished case: its ``CaseSpec.key`` and the wall-clock seconds it took."""

    key: str
    suite: str
    name: str
    params: dict[str, Any]
    seconds: float


#: The stored record is the suite's :class:`~benchkill.bench.model.Record` with its case
#: key, summary and git state filled in (:meth:`~benchkill.bench.model.Record.stored`);
#: the name stays for the readers that know it.
ResultRecord = Record


#: The state of the code a record was measured with: (git commit, work tree dirty).
CodeState = tuple[str | None, bool | None]


@dataclass(frozen=True)
class Results:
    """One run: machine, settings, finished cases and their records."""

    machine: Machine
    settings: RunSettings
    cases: tuple[CaseRun, ...] = ()
    records: tuple[ResultRecord, ...] = ()

    @property
    def done(self) -> frozenset[str]:
        """Keys of the finished cases."""
        return frozenset(c.key for c in self.cases)

    def with_case(self, spec: CaseSpec, seconds: float, records: Iterable[ResultRecord]) -> Results:
        """A copy with one more finished case and its records."""
        run = CaseRun(spec.key, spec.suite, spec.name, dict(spec.params), seconds)
        return replace(self, cases=self.cases + (run,), records=self.records + tuple(records))

    def without_cases(self, keys: Iterable[str]) -> Results:
        """A copy without the cases ``keys`` and their records (to measure them again)."""
        drop = frozenset(keys)
        return replace(
            self,
            cases=tuple(c for c in self.cases if c.key not in drop),
            records=tuple(r for r in self.records if r.case not in drop),
        )

    @property
    def code_states(self) -> tuple[CodeState, ...]:
        """The distinct (commit, dirty) states of the code that measured the records, in
        order of appearance; a record without one (version 1 files) counts as measured
        at the machine's.  More than one: a resume onto changed code mixed them."""
        start = (self.machine.git_commit, self.machine.git_dirty)
        states = dict.fromkeys(
            (r.git_commit, r.git_dirty) if r.git_commit is not None else start for r in self.records
        )
        return tuple(states)


# --- writing -------------------------------------------------------------------------


def to_dict(results: Results) -> dict[str, Any]:
    """The JSON form of ``results`` (schema_version first)."""
    return {"schema_version": SCHEMA_VERSION, **asdict(results)}


def save(results: Results, path: Path, *, exclusive: bool = False) -> None:
    """Write ``results`` to ``path`` atomically; with ``exclusive``, only if ``path`` does
    not exist yet (a BenchkillError otherwise)."""
    try:
        text = json.dumps(to_dict(results), indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BenchkillError(f"{path}: results are not JSON-serialisable: {exc}") from None
    try:
        write_atomic(Path(path), text + "\n", exclusive=exclusive)
    except FileExistsError:
        raise BenchkillError(f"{path}: already exists; it is not overwritten") from None
    except OSError as exc:
        raise BenchkillError(f"{path}: cannot write results: {exc.strerror or exc}") from None


# --- reading -------------------------------------------------------------------------


#: A results file larger than this is refused unread (the largest runs are a few MB).
MAX_FILE_BYTES = 1 << 30


def read_json(path: Path) -> Any:
    """Parse a JSON file; every failure is a BenchkillError naming the file."""
    path = Path(path)
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(info.st_mode):
            raise BenchkillError(f"{path}: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise BenchkillError(f"{path}: {info.st_size:,} bytes, too large for a results file")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchkillError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BenchkillError(f"{path}: is a directory, not a results file") from None
    except UnicodeDecodeError:
        raise BenchkillError(f"{path}: not a text file (invalid UTF-8)") from None
    except OSError as exc:
        raise BenchkillError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not text.strip():
        raise BenchkillError(f"{path}: empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(text.rstrip())
        cut = exc.msg.startswith("Unterminated string") and "\n" not in text[exc.pos :]
        hint = " (truncated?)" if at_end or cut else ""
        raise BenchkillError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except RecursionError:
        raise BenchkillError(f"{path}: JSON nested too deeply for a results file") from None
    if "\\u" in text:  # escapes may spell lone surrogates, which no text can print
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BenchkillError(
                f"{path}: a string holds an invalid Unicode escape (a lone surrogate)"
            ) from None
    return data


class _Bad(Exception):
    """A schema violation at a location inside the document."""


def _get(d: Any, name: str, kind: type | tuple[type, ...], where: str, optional: bool = False):
    if not isinstance(d, dict):
        raise _Bad(f"{where or 'top level'}: expected an object")
    if name not in d:
        if optional:
            return None
        raise _Bad(f"{where + '.' if where else ''}{name}: missing")
    value = d[name]
    if value is None and optional:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _Bad(f"{where + '.' if where else ''}{name}: unexpected boolean")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise _Bad(f"{where + '.' if where else ''}{name}: expected {names}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"{where}: expected a number")
    if not math.isfinite(value):
        raise _Bad(f"{where}: not a finite number")
    return float(value)


def _machine(d: Any) -> Machine:
    w = "machine"
    mem = _get(d, "memory_bytes", int, w, optional=True)
    return Machine(
        name=_get(d, "name", str, w),
        hostname=_get(d, "hostname", str, w, optional=True),
        cpu_model=_get(d, "cpu_model", str, w, optional=True),
        cores=_get(d, "cores", int, w, optional=True),
        memory_bytes=mem,
        os=_get(d, "os", str, w, optional=True),
        python=_get(d, "python", str, w, optional=True),
        python_build=_get(d, "python_build", str, w, optional=True),
        malloc=_get(d, "malloc", str, w, optional=True),
        tvm_version=_get(d, "tvm_version", str, w, optional=True),
        tvm_ffi_version=_get(d, "tvm_ffi_version", str, w, optional=True),
        benchkill_version=_get(d, "benchkill_version", str, w, optional=True),
        git_commit=_get(d, "git_commit", str, w, optional=True),
        git_dirty=_get(d, "git_dirty", bool, w, optional=True),
    )


def _strings(value: list, where: str) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in value):
        raise _Bad(f"{where}: expected a list of strings")
    return tuple(value)


def _settings(d: Any) -> RunSettings:
    w = "settings"
    return RunSettings(
        suites=_strings(_get(d, "suites", list, w), f"{w}.suites"),
        quick=_get(d, "quick", bool, w),
        command=_strings(_get(d, "command", list, w), f"{w}.command"),
        started_at=_get(d, "started_at", str, w),
        finished_at=_get(d, "finished_at", str, w, optional=True),
        resumed_at=_strings(_get(d, "resumed_at", list, w), f"{w}.resumed_at"),
    )


def _case(d: Any, w: str) -> CaseRun:
    return CaseRun(
        key=_get(d, "key", str, w),
        suite=_get(d, "suite", str, w),
        name=_get(d, "name", str, w),
        params=_get(d, "params", dict, w),
        seconds=_number(_get(d, "seconds", (int, float), w), f"{w}.seconds"),
    )


def _summary(d: Any, w: str) -> Summary:
    values = {
        f: _number(_get(d, f, (int, float), w), f"{w}.{f}")
        for f in ("min", "median", "q1", "q3", "mean", "std")
    }
    return Summary(n=_get(d, "n", int, w), **values)


def _record(d: Any, w: str, version: int) -> ResultRecord:
    samples = _get(d, "samples", list, w)
    status = _get(d, "status", str, w)
    if status not in STATUSES:
        raise _Bad(f"{w}.status: {status!r} is not one of {', '.join(STATUSES)}")
    summary = _get(d, "summary", dict, w, optional=True)
    return ResultRecord(
        case=_get(d, "case", str, w),
        suite=_get(d, "suite", str, w),
        name=_get(d, "name", str, w),
        params=_get(d, "params", dict, w),
        metric=_get(d, "metric", str, w),
        unit=_get(d, "unit", str, w),
        samples=tuple(_number(v, f"{w}.samples[{i}]") for i, v in enumerate(samples)),
        summary=_summary(summary, f"{w}.summary") if summary is not None else None,
        status=status,
        error=_get(d, "error", str, w, optional=True),
        extra=_get(d, "extra", dict, w),
        git_commit=_get(d, "git_commit", str, w, optional=True) if version >= 2 else None,
        git_dirty=_get(d, "git_dirty", bool, w, optional=True) if version >= 2 else None,
    )


def from_dict(data: Any, path: Path) -> Results:
    """Check and convert the JSON form; a BenchkillError names the file and the problem
    (the schema, then the values: :func:`benchkill.results.validation.check_results`)."""
    if not isinstance(data, dict) or "schema_version" not in data:
        raise BenchkillError(f"{path}: not a benchkill results file (no schema_version)")
    version = data["schema_version"]
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise BenchkillError(
            f"{path}: results schema_version {version!r} is not supported "
            f"(this benchkill reads versions {', '.join(map(str, READABLE_VERSIONS))})"
        )
    try:
        results = Results(
            machine=_machine(_get(data, "machine", dict, "")),
            settings=_settings(_get(data, "settings", dict, "")),
            cases=tuple(
                _case(c, f"cases[{i}]") for i, c in enumerate(_get(data, "cases", list, ""))
            ),
            records=tuple(
                _record(r, f"records[{i}]", version)
                for i, r in enumerate(_get(data, "records", list, ""))
            ),
        )
    except _Bad as exc:
        raise BenchkillError(f"{path}: malformed results file: {exc}") from None
    try:
        check_results(results)
    except Invalid as exc:
        raise BenchkillError(f"{path}: impossible value: {exc}") from None
    return results


def load(path: Path) -> Results:
    """Read a benchkill results file written by :func:`save`."""
    return from_dict(read_json(path), Path(path))
