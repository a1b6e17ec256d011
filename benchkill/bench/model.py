"""The record model: what a suite hands to the runner and what a results file stores.

The runner (``benchkill run``) asks a suite for its cases, runs each with ``run_case``
and stores every returned :class:`Record` (with summary statistics added by
:mod:`benchkill.stats`) in the results file, together with the :class:`Machine` the run
measured.  One case may return several records, e.g. benchkill's, TVM's and the naive
pass timed side by side on one module.

:func:`label` is the one way a measurement is named in text (``suite:name[k=v,...]
metric``): case keys, ``compare --only``, tables and figure legends all use it.  This
module imports nothing of benchkill at import time (the summary statistics of
:mod:`benchkill.stats` when a record is stored), so every layer above may use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchkill.stats import Summary

#: Status values of a record.
OK = "ok"
FAILED = "failed"
EXPECTED_FAILURE = "expected-failure"
STATUSES = (OK, FAILED, EXPECTED_FAILURE)

#: ``impl`` of the pass suite's floor records: not a pass, the FFI work an exact Python
#: pass cannot skip (:func:`benchkill.passes.profile.floor_work`).
FLOOR = "floor"

#: Other spellings of the units records use ("seconds", "bytes", "ratio").
UNIT_ALIASES = {"s": "seconds", "sec": "seconds", "B": "bytes"}


def canonical_unit(unit: str) -> str:
    """``"s"`` -> ``"seconds"``, ``"B"`` -> ``"bytes"``; other units unchanged."""
    return UNIT_ALIASES.get(unit, unit)


def params_text(params: dict[str, Any], sep: str = ",") -> str:
    """``k=v`` for every parameter, sorted by name, joined by ``sep``."""
    return sep.join(f"{k}={params[k]}" for k in sorted(params))


def label(suite: str, name: str, params: dict[str, Any], metric: str | None = None) -> str:
    """``suite:name[k=v,...] metric`` (without the metric: the case's name)."""
    case = f"{suite}:{name}[{params_text(params)}]"
    return f"{case} {metric}" if metric else case


@dataclass(frozen=True)
class CaseSpec:
    """One unit of work for ``run_case``: a name and JSON-serialisable parameters."""

    suite: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A stable identifier, used by ``--resume`` to skip finished cases."""
        return label(self.suite, self.name, self.params)


def params_key(params: dict[str, Any]) -> str:
    """A canonical string for a params dict (sorted keys), for matching records."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Record:
    """One measured metric of one case: as a suite returns it, and as a results file
    stores it (:meth:`stored`: with its case key, summary and the code's git state).

    ``samples`` are raw measurements (seconds, bytes, or a ratio), never summaries;
    ``status`` is one of :data:`STATUSES`; ``error`` says why a case failed.
    ``extra`` carries small JSON-serialisable details (e.g. a memory timeline).
    ``case`` (the key of the case that produced it) and ``summary`` (None without
    samples) are keyword-only: a suite leaves them out, storing fills them in.  The
    fields' order is the stored JSON's.
    """

    case: str = field(default="", kw_only=True)
    suite: str
    name: str
    params: dict[str, Any]
    metric: str
    unit: str
    samples: tuple[float, ...] = ()
    summary: Summary | None = field(default=None, kw_only=True)
    status: str = OK
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    git_commit: str | None = None
    git_dirty: bool | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies the same measurement across runs: suite, name, params, metric."""
        return (self.suite, self.name, params_key(self.params), self.metric)

    def stored(self, case: str, code: tuple[str | None, bool | None] = (None, None)) -> Record:
        """This record as a results file stores it: of case ``case``, measured by the
        code at ``code`` (git commit, dirty), with the summary of its samples."""
        from benchkill.stats import summarize

        samples = tuple(float(v) for v in self.samples)
        return replace(
            self,
            case=case,
            params=dict(self.params),
            samples=samples,
            summary=summarize(samples) if samples else None,
            extra=dict(self.extra),
            git_commit=code[0],
            git_dirty=code[1],
        )

    @classmethod
    def from_record(
        cls, record: Record, case: str, code: tuple[str | None, bool | None] = (None, None)
    ) -> Record:
        """``record.stored(case, code)`` (the name the stored type had)."""
        return record.stored(case, code)


#: The packages whose release changes what a run measures, each with its :class:`Machine`
#: field: ``compare`` warns when one differs, ``run --resume`` refuses to mix them (so do
#: both for the interpreter, :data:`PYTHON_FIELDS`).
PACKAGE_FIELDS: tuple[tuple[str, str], ...] = (
    ("apache-tvm", "tvm_version"),
    ("apache-tvm-ffi", "tvm_ffi_version"),
)
#: (name, Machine field) of the interpreter: its release and its build.
PYTHON_FIELDS: tuple[tuple[str, str], ...] = (
    ("Python", "python"),
    ("Python build", "python_build"),
)
#: (name, Machine field) of the allocator the process's malloc calls go to.
MALLOC_FIELDS: tuple[tuple[str, str], ...] = (("malloc", "malloc"),)
#: The operating system and its kernel build (``platform.platform()``): between two
#: runs here (2026-12-01 and 2026-12-03) the kernel build changed on the same CPU
#: (``...-fc-v857-...`` to ``...-fc-v1147-...``), a change of the software under both
#: passes.
OS_FIELDS: tuple[tuple[str, str], ...] = (("OS", "os"),)
#: What ``run --resume`` refuses to mix besides the commit: the interpreter, the malloc,
#: the operating system and kernel build, and the packages.
RESUME_FIELDS = (*PYTHON_FIELDS, *MALLOC_FIELDS, *OS_FIELDS, *PACKAGE_FIELDS)


def changed_fields(
    fields: tuple[tuple[str, str], ...], old: Machine, new: Machine
) -> list[tuple[str, Any, Any]]:
    """(name, old value, new value) of each ``(name, Machine field)`` both record, and differ."""
    pairs = [(name, getattr(old, f), getattr(new, f)) for name, f in fields]
    return [(name, a, b) for name, a, b in pairs if a and b and a != b]


@dataclass(frozen=True)
class Machine:
    """Where and with what a run was measured.  ``name`` names the results directory.

    :func:`benchkill.bench.machine.collect_machine` fills it in for this machine.
    """

    name: str
    hostname: str | None = None
    cpu_model: str | None = None
    cores: int | None = None
    memory_bytes: int | None = None
    os: str | None = None
    python: str | None = None
    #: which build of that Python: its installation, build date and compiler.  Builds
    #: differ in speed (Debian's PGO/LTO 3.11.2 ran benchkill's pass 8-17% faster than
    #: pyenv's plain 3.11.7, README "The interpreter"), and the release does not name one
    python_build: str | None = None
    #: the library ``malloc`` resolves to, and glibc's malloc settings from the
    #: environment (:func:`benchkill.bench.machine.malloc_in_use`): under glibc's malloc
    #: TVM's pass slowed by 8-12% while a decoder was alive, under jemalloc by 0-3%
    malloc: str | None = None
    tvm_version: str | None = None
    #: apache-tvm-ffi: every read of the IR goes through it, so its release sets much of
    #: benchkill's pass time (apache-tvm pins only a lower bound)
    tvm_ffi_version: str | None = None
    benchkill_version: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
