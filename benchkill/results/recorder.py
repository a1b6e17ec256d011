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

from benchkill.bench.model import FAILED, CaseSpec, Record
from benchkill.results.store import CodeState, ResultRecord, Results, save
from benchkill.results.validation import Invalid, check_record


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
        """One more finished case; saved at once.

        A record that loading would reject (:func:`~benchkill.results.validation.
        check_record`: a negative time, ...) is stored as a failed record saying why, and a
        case that returns one measurement twice as one failed record: the file must
        always load.
        """
        stored = [self._checked(ResultRecord.from_record(r, spec.key, self.code)) for r in records]
        keys = [r.key for r in stored]
        taken = {r.key for r in self.results.records}
        if len(set(keys)) != len(keys) or taken.intersection(keys):
            twice = next(k for i, k in enumerate(keys) if k in taken or k in keys[:i])
            crash = Record(spec.suite, spec.name, dict(spec.params), "case", "", status=FAILED)
            error = f"ValueError: the case returned measurement {twice[3]!r} twice"
            stored = [replace(ResultRecord.from_record(crash, spec.key, self.code), error=error)]
        self.results = self.results.with_case(spec, seconds, stored)
        save(self.results, self.path)

    def _checked(self, record: ResultRecord) -> ResultRecord:
        try:
            check_record(record, "record")
        except Invalid as exc:
            error = f"ValueError: {str(exc).split(': ', 1)[-1]}"  # (the record is known)
            return replace(record, samples=(), summary=None, status=FAILED, error=error)
        return record

    def finish(self, finished_at: str) -> Results:
        """Mark the run complete (``settings.finished_at``), save and return the results."""
        settings = replace(self.results.settings, finished_at=finished_at)
        self.results = replace(self.results, settings=settings)
        save(self.results, self.path)
        return self.results
