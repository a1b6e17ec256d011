"""What a suite hands to the runner: case specifications and measured records.

The runner (``benchkill run``) asks a suite for its cases, runs each with
``run_case`` and stores every returned :class:`Record` (with summary statistics
added by :mod:`benchkill.stats`) in the results file.  One case may return several
records, e.g. benchkill's, TVM's and the naive pass timed side by side on one module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Status values of a record.
OK = "ok"
FAILED = "failed"
EXPECTED_FAILURE = "expected-failure"
STATUSES = (OK, FAILED, EXPECTED_FAILURE)


@dataclass(frozen=True)
class CaseSpec:
    """One unit of work for ``run_case``: a name and JSON-serialisable parameters."""

    suite: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A stable identifier, used by ``--resume`` to skip finished cases."""
        items = ",".join(f"{k}={self.params[k]}" for k in sorted(self.params))
        return f"{self.suite}:{self.name}[{items}]"


@dataclass(frozen=True)
class Record:
    """One measured metric of one case.

    ``samples`` are raw measurements (seconds, bytes, or a ratio), never summaries;
    ``status`` is one of :data:`STATUSES`; ``error`` says why a case failed.
    ``extra`` carries small JSON-serialisable details (e.g. a memory timeline).
    """

    suite: str
    name: str
    params: dict[str, Any]
    metric: str
    unit: str
    samples: tuple[float, ...] = ()
    status: str = OK
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
