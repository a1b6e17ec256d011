"""The pass suite's instruction records: ``benchkill run --instructions[-only]``.

:class:`CountingSuite` wraps the pass suite so that each case also counts its
implementations' instructions (:func:`benchkill.bench.instructions.count_all`, two
children at once on two cores); :func:`case_records` turns the counts into records:

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

from benchkill.bench.instructions import METRIC, RATIO_METRIC, UNIT, count_all
from benchkill.bench.model import FAILED, OK, CaseSpec, Record


class CountingSuite:
    """A suite (the pass suite) whose cases also count instructions
    (``benchkill run --instructions``); ``only``: nothing but the counts.

    A count that fails becomes a FAILED ``pass_instructions`` record, so the case's
    other records are kept.
    """

    def __init__(self, suite: Any, only: bool = False) -> None:
        self.suite = suite
        self.only = only
        self.NAME = suite.NAME

    def cases(self, quick: bool) -> list[CaseSpec]:
        return self.suite.cases(quick)

    def run_case(self, spec: CaseSpec) -> list[Record]:
        records = [] if self.only else list(self.suite.run_case(spec))
        try:
            return records + self.suite.instruction_records(spec)
        except Exception as exc:  # noqa: BLE001 - a failed count must not lose the times
            params = {k: spec.params[k] for k in ("family", "bindings", "n_ops", "seed")}
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
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


def case_records(
    suite: str, spec: CaseSpec, impls: Sequence[str], repeats: int, **options: Any
) -> list[Record]:
    """``pass_instructions`` per implementation and ``instructions_vs_tvm`` for one case
    of the pass suite (params ``family``, ``bindings``, ``n_ops``, ``seed``)."""
    p = spec.params
    jobs = [
        dict(family=p["family"], n_ops=p["n_ops"], impl=impl, repeats=repeats, seed=p["seed"])
        | options
        for impl in impls
    ]
    results = dict(zip(impls, count_all(jobs), strict=True))

    def record(impl: str, metric: str, unit: str, samples, **extra: Any) -> Record:
        c = results[impl]
        return Record(
            suite=suite,
            name=spec.name,
            params={**{k: p[k] for k in ("family", "bindings", "n_ops", "seed")}, "impl": impl},
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
