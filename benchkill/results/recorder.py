"""A run's results file while the run goes on: saved after every finished case.

:class:`ResultsFile` is what :func:`benchkill.bench.runner.run` reports to: it converts
each case's records into stored records (with summaries and the git state of the code
that measured them) and rewrites the file atomically, so an interrupted run keeps every
finished case and ``--resume`` can complete it.  A new run's file is created
exclusively: it never replaces a file that appeared in the meantime.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchkill.bench.model import CaseSpec, Record
from benchkill.results.store import CodeState, ResultRecord, Results, save


class ResultsFile:
    """The results of a run in the making and the file they are saved to.

    ``code`` is the (git commit, dirty) state of the code measuring now, stored with each
    record; ``create``: the file must not exist yet (a new run), else it is replaced (a
    resumed run).
    """

    def __init__(
        self,
        results: Results,
        path: Path,
        code: CodeState | None = None,
        create: bool = False,
    ) -> None:
        self.results = results
        self.path = Path(path)
        machine = results.machine
        self.code = code if code is not None else (machine.git_commit, machine.git_dirty)
        self.create = create

    @property
    def quick(self) -> bool:
        """Whether the run measures the ``--quick`` cases."""
        return self.results.settings.quick

    @property
    def done(self) -> frozenset[str]:
        """Keys of the cases already finished (skipped by a resumed run)."""
        return self.results.done

    def start(self) -> None:
        """Write the file before the first case (it then exists even if nothing finishes)."""
        save(self.results, self.path, exclusive=self.create)
        self.create = False

    def add(self, spec: CaseSpec, seconds: float, records: Sequence[Record]) -> None:
        """One more finished case; saved at once."""
        stored = [ResultRecord.from_record(r, spec.key, self.code) for r in records]
        self.results = self.results.with_case(spec, seconds, stored)
        save(self.results, self.path)

    def finish(self, finished_at: str) -> Results:
        """Mark the run complete (``settings.finished_at``), save and return the results."""
        settings = replace(self.results.settings, finished_at=finished_at)
        self.results = replace(self.results, settings=settings)
        save(self.results, self.path)
        return self.results
