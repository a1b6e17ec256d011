"""The pass suite's instruction records: ``benchkill run --instructions[-only]``.

:class:`CountingSuite` wraps the pass suite so that each case also counts its
implementations' instructions (:func:`benchkill.bench.instructions.count_cases`: one
child per implementation for all the cases, two children at once on two cores);
:func:`case_records` turns the counts into records:

* ``pass_instructions`` (unit ``instructions``), per implementation: one sample per
  counted application after the warm-up one; ``extra`` holds the warm-up count, the
  child's CPU seconds, the instrument settings and any test hook in effect;
* ``instructions_vs_tvm`` (ratio, higher is better): TVM's count / benchkill's, per
  repeat.

Both carry ``extra["kind"] = "instructions"``: compare judges them exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchkill.bench.instructions import (
    METRIC,
    RATIO_METRIC,
    UNIT,
    Counts,
    count_all,
    count_cases,
)
from benchkill.bench.model import FAILED, OK, CaseSpec, Record

#: The case parameters a record keeps (``model``: the real family's case).
_PARAMS = ("family", "model", "bindings", "n_ops", "seed")


class CountingSuite:
    """A suite (the pass suite) whose cases also count instructions
    (``benchkill run --instructions``); ``only``: nothing but the counts.

    The counts of every case still to run are taken at the first one, in one child per
    implementation (importing TVM under valgrind is most of a child's cost), and handed
    out case by case, so each case's records are still saved when it finishes.  A count
    that fails becomes a FAILED ``pass_instructions`` record, so the case's other records
    are kept.
    """

    def __init__(self, suite: Any, only: bool = False) -> None:
        self.suite = suite
        self.only = only
        self.NAME = suite.NAME
        self._cases: list[CaseSpec] = []
        self._counted: dict[str, list[Record] | Exception] = {}

    def cases(self, quick: bool) -> list[CaseSpec]:
        self._cases = list(self.suite.cases(quick))
        return self._cases

    def run_case(self, spec: CaseSpec) -> list[Record]:
        records = [] if self.only else list(self.suite.run_case(spec))
        if spec.key not in self._counted:
            self._count_from(spec)
        counted = self._counted.pop(spec.key)
        if not isinstance(counted, Exception):
            return records + counted
        params = {k: spec.params[k] for k in _PARAMS if k in spec.params}
        error = f"{type(counted).__name__}: {' '.join(str(counted).split())}"
        failed = Record(
            suite=spec.suite,
            name=spec.name,
            params={**params, "impl": "benchkill"},
            metric=METRIC,
            unit=UNIT,
            status=FAILED,
            error=error,
        )
        return records + [failed]

    def _count_from(self, spec: CaseSpec) -> None:
        """Count ``spec`` and the cases after it (in :meth:`cases`' order) at once."""
        keys = [s.key for s in self._cases]
        later = self._cases[keys.index(spec.key) + 1 :] if spec.key in keys else []
        batch = [spec] + [s for s in later if s.key not in self._counted]
        try:
            per_case = self.suite.instruction_records(batch)
        except Exception as exc:  # noqa: BLE001 - a failed count must not lose the times
            self._counted.update((s.key, exc) for s in batch)
            return
        self._counted.update((s.key, r) for s, r in zip(batch, per_case, strict=True))


def case_records(
    suite: str, specs: Sequence[CaseSpec], impls: Sequence[str], repeats: int, **options: Any
) -> list[list[Record]]:
    """Per case of the pass suite (params ``family``, ``bindings``, ``n_ops``, ``seed``;
    ``model`` in the real family, counted on :func:`benchkill.inputs.real_pass.pass_input`),
    ``pass_instructions`` per implementation and ``instructions_vs_tvm``; every case of
    an implementation is counted in one child, the implementations' children at once."""
    jobs = [
        dict(
            cases=[
                (s.params["family"], s.params.get("model", s.params["n_ops"]), s.params["seed"])
                for s in specs
            ],
            impl=impl,
            repeats=repeats,
        )
        | options
        for impl in impls
    ]
    by_impl = dict(zip(impls, count_all(jobs, counter=count_cases), strict=True))
    return [
        _records(suite, spec, {impl: by_impl[impl][i] for impl in impls})
        for i, spec in enumerate(specs)
    ]


def _records(suite: str, spec: CaseSpec, results: dict[str, Counts]) -> list[Record]:
    p = spec.params

    def record(impl: str, metric: str, unit: str, samples, **extra: Any) -> Record:
        c = results[impl]
        return Record(
            suite=suite,
            name=spec.name,
            params={**{k: p[k] for k in _PARAMS if k in p}, "impl": impl},
            metric=metric,
            unit=unit,
            samples=tuple(float(s) for s in samples),
            status=OK,
            extra={
                "kind": UNIT,
                "bindings_actual": c.bindings,
                "instrument": c.settings,
                **({"test_hooks": c.hooks} if c.hooks else {}),
                **extra,
            },
        )

    records = [
        record(
            impl,
            METRIC,
            UNIT,
            c.counts,
            warmup_instructions=c.warmup,
            child_cpu_seconds=round(c.cpu_seconds, 2),
        )
        for impl, c in results.items()
    ]
    if "benchkill" in results and "tvm" in results:
        pairs = zip(results["tvm"].counts, results["benchkill"].counts, strict=True)
        records.append(
            record("benchkill", RATIO_METRIC, "ratio", [t / b for t, b in pairs], numerator="tvm")
        )
    return records
