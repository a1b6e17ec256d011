"""asv benchmarks of KillAfterLastUse itself: benchkill's pass against TVM's C++ pass.

The classes run over generator family x module size (:mod:`benchmarks.common`), and
:class:`ModelPass` over the real decoders of the ``model`` family and :class:`RealPass`
over the PyTorch models of the ``real`` family; the module is built in
``setup`` (cached, so asv's setup before each sample is cheap) and the timed bodies only
run a pass.  The ratio benchmarks use the pass suite's time budgets
(:func:`benchkill.bench.suites.pass_suite.round_budget`).
"""

from __future__ import annotations

import statistics
import time

from . import common


class PassTime:
    """Wall time of one pass over one generated module."""

    params = (list(common.FAMILIES), list(common.SIZES))
    param_names = ("family", "bindings")
    # One call per sample (a 30k-binding module takes seconds); 3 to 10 samples, at
    # most 20 s per round.
    number = 1
    repeat = (3, 10, 20.0)
    timeout = 300

    def setup(self, family: str, bindings: int) -> None:
        self.mod = common.pass_input(family, bindings)
        self.passes = common.passes()

    def time_pass_benchkill(self, family: str, bindings: int) -> None:
        self.passes["benchkill"](self.mod)

    def time_pass_tvm(self, family: str, bindings: int) -> None:
        self.passes["tvm"](self.mod)


class PassSpeedup:
    """TVM's time over benchkill's, and benchkill's over the floor's, measured interleaved
    in one process.

    Timing the passes round by round in the same process (as the "pass" suite does)
    makes the ratio robust to a machine whose speed drifts, which two separate asv
    timings are not.  The outputs of the warm-up runs are compared first: a speedup
    of a pass that gives another module than TVM's would mean nothing.  The floor (the
    FFI work benchkill's pass cannot skip) runs in the same rounds within the pass
    suite's floor budget, so ``track_pass_time_over_floor`` is the pass suite's
    ``time_over_floor``: the time figure that gave no false alarm where CPU times gave 7
    in 10 (README "trust").  ``setup_cache`` measures every case once, in one
    interleaved run per case, and both ratios come from it.
    """

    params = (list(common.FAMILIES), list(common.SIZES))
    param_names = ("family", "bindings")
    unit = "ratio"
    timeout = 600

    def setup_cache(self) -> dict[str, tuple[float, float | None]]:
        families, sizes = self.params
        return {
            f"{f}-{b}": _ratios(common.new_pass_input(f, b), common.passes(), b)
            for f in families
            for b in sizes
        }

    def track_pass_speedup(self, ratios: dict, family: str, bindings: int) -> float:
        return ratios[f"{family}-{bindings}"][0]

    def track_pass_time_over_floor(self, ratios: dict, family: str, bindings: int) -> float:
        return _over_floor(ratios[f"{family}-{bindings}"], f"{family} at {bindings} bindings")


def _ratios(mod, passes: dict, bindings: int) -> tuple[float, float | None]:
    """Medians over interleaved rounds of TVM's CPU time / benchkill's and of benchkill's /
    the floor's (None when the floor has no round of its own, or when benchkill's sweep
    hands the function to the fallback), outputs checked first."""
    from benchkill.bench.model import FLOOR
    from benchkill.bench.suites.pass_suite import (
        FLOOR_BUDGET_SECONDS,
        floor_work,
        output_errors,
        round_budget,
    )
    from benchkill.bench.timing import interleave
    from benchkill.stats import round_ratios

    functions = {name: (lambda p=p: p(mod)) for name, p in passes.items()}
    work = floor_work(mod)
    if work is not None:
        functions[FLOOR] = work.run
    timing = interleave(
        functions,
        round_budget(bindings),
        keep_outputs=False,
        cpu_clock=time.process_time,  # as the pass suite's speedup_vs_tvm
        budgets={FLOOR: FLOOR_BUDGET_SECONDS} if work is not None else None,
        check=output_errors,
    )
    if timing.checked:
        raise RuntimeError("; ".join(timing.checked.values()))
    cpu = timing.cpu_samples
    speedup = statistics.median(round_ratios(cpu["tvm"], cpu["benchkill"]))
    if work is None or FLOOR in timing.from_warmup:
        return speedup, None
    return speedup, statistics.median(round_ratios(cpu["benchkill"], cpu[FLOOR]))


def _over_floor(ratios: tuple[float, float | None], case: str) -> float:
    """benchkill / floor of one case of :func:`_ratios`; asv records a failure when the
    floor had no round of its own."""
    if ratios[1] is None:
        raise RuntimeError(f"{case} has no floor timed in rounds")
    return ratios[1]


def _build_decoder(ratios: dict, bindings: int) -> None:
    """``setup`` of :meth:`ModelPass.time_pass_benchkill` alone (asv calls a benchmark's own
    ``setup`` attribute with its arguments, no ``self``): the decoder, built once per
    process (:func:`benchmarks.common.pass_input` is cached), so the tracks, which read
    ``setup_cache``'s ratios, build none."""
    common.pass_input("model", bindings)
    common.passes()


class ModelPass:
    """The pass on real decoders (``model`` family): benchkill's time, TVM's time over it,
    and benchkill's over the floor's.

    The ratios come from one interleaved run per size in ``setup_cache``, as
    :class:`PassSpeedup`'s do (the floor in the same rounds, within the pass suite's floor
    budget).  No class ``setup``: only ``time_pass_benchkill`` needs the decoder (built in
    about 40 ms per layer), and its own ``setup`` builds it.
    """

    params = (list(common.MODEL_SIZES),)
    param_names = ("bindings",)
    number = 1
    repeat = (3, 10, 20.0)
    timeout = 300

    def setup_cache(self) -> dict[int, tuple[float, float | None]]:
        return {
            b: _ratios(common.new_pass_input("model", b), common.passes(), b)
            for b in self.params[0]
        }

    def time_pass_benchkill(self, ratios: dict, bindings: int) -> None:
        common.passes()["benchkill"](common.pass_input("model", bindings))  # cached lookups

    time_pass_benchkill.setup = _build_decoder  # type: ignore[attr-defined]

    def track_pass_speedup(self, ratios: dict, bindings: int) -> float:
        return ratios[bindings][0]

    track_pass_speedup.unit = "ratio"  # type: ignore[attr-defined]

    def track_pass_time_over_floor(self, ratios: dict, bindings: int) -> float:
        return _over_floor(ratios[bindings], f"model at {bindings} bindings")

    track_pass_time_over_floor.unit = "ratio"  # type: ignore[attr-defined]


def _build_real(ratios: dict, model: str) -> None:
    """``setup`` of :meth:`RealPass.time_pass_benchkill` (as :func:`_build_decoder`)."""
    common.real_input(model)
    common.passes()


class RealPass:
    """The pass on the ``real`` family: the kill step's input of PyTorch models
    (torchvision CNNs with a dynamic batch and static, a transformer encoder and a
    decoder), as :class:`ModelPass` on the decoders: benchkill's time, TVM's over it and
    benchkill's over the floor's, from one interleaved run per model in ``setup_cache``.
    Without the ``[models]`` extra every benchmark is skipped (NotImplementedError, asv's
    skip) with the reason."""

    params = (list(common.REAL_CASES),)
    param_names = ("model",)
    number = 1
    repeat = (3, 10, 20.0)
    timeout = 600

    def setup_cache(self) -> dict[str, tuple[float, float | None]]:
        from benchkill.inputs.real_pass import REAL_CASES, missing

        if missing() is not None:
            return {}
        return {
            m: _ratios(common.real_input(m), common.passes(), REAL_CASES[m][2])
            for m in self.params[0]
        }

    def setup(self, ratios: dict, model: str) -> None:
        if model not in ratios:
            from benchkill.inputs.real_pass import missing

            raise NotImplementedError(missing() or f"{model}: not measured")

    def time_pass_benchkill(self, ratios: dict, model: str) -> None:
        common.passes()["benchkill"](common.real_input(model))  # cached lookups

    time_pass_benchkill.setup = _build_real  # type: ignore[attr-defined]

    def track_pass_speedup(self, ratios: dict, model: str) -> float:
        return ratios[model][0]

    track_pass_speedup.unit = "ratio"  # type: ignore[attr-defined]

    def track_pass_time_over_floor(self, ratios: dict, model: str) -> float:
        return _over_floor(ratios[model], f"real model {model}")

    track_pass_time_over_floor.unit = "ratio"  # type: ignore[attr-defined]


class PassPeakMemory:
    """Peak resident memory of a process that runs one pass over one module.

    asv's peakmem is the whole process's high-water mark, setup included, so
    ``peakmem_reference`` runs the same setup and no pass: the interpreter, TVM and
    the input module.  A pass's own memory is its figure minus the reference.
    """

    params = (list(common.FAMILIES), list(common.MEMORY_SIZES))
    param_names = ("family", "bindings")
    timeout = 300

    def setup(self, family: str, bindings: int) -> None:
        self.mod = common.pass_input(family, bindings)
        self.passes = common.passes()

    def peakmem_reference(self, family: str, bindings: int) -> None:
        pass

    def peakmem_pass_benchkill(self, family: str, bindings: int) -> None:
        self.passes["benchkill"](self.mod)

    def peakmem_pass_tvm(self, family: str, bindings: int) -> None:
        self.passes["tvm"](self.mod)


class PassInstructions:
    """Instructions of one benchkill pass application, counted by valgrind's callgrind.

    Exact from run to run (:mod:`benchkill.bench.instructions`: a child process under
    ``valgrind --tool=callgrind --instr-atstart=no`` with a pinned environment), so a
    1% slowdown stands out on any machine: ``asv continuous --factor 1.005 -b
    instructions main HEAD``.  One application after a warm-up one: in one process
    the counts of successive applications differ by under 0.05% (the object addresses
    the pass's tables hash), so more would only add the seconds they cost (3 s of the
    whole ``asv run --quick``).
    ``setup_cache`` counts every case once per asv run, each in a child of its own, two
    at a time (counts do not depend on the load): a case's count then does not depend
    on the other cases counted in the same process, so adding a case to ``params``
    leaves the others' counts as they were (in one child, chain and mixed read
    91,031,313 and 90,002,848; each in a child of its own, 91,059,910 and 90,073,028),
    and the two children take 16 s where one took 19-20 (importing TVM under valgrind
    is 11 s of each).  The sizes are
    :data:`benchmarks.common.INSTRUCTION_SIZES`.
    """

    params = (list(common.FAMILIES), list(common.INSTRUCTION_SIZES))
    param_names = ("family", "bindings")
    unit = "instructions"
    rounds = 1
    timeout = 1800

    def setup_cache(self) -> dict[str, float]:
        from benchkill.bench.instructions import count, count_all
        from benchkill.inputs.families import ops_for_bindings

        families, sizes = self.params
        cases = [(f, b) for f in families for b in sizes]
        jobs = [
            dict(
                impl="benchkill",
                family=f,
                n_ops=ops_for_bindings(f, b),
                seed=common.SEED,
                repeats=1,
            )
            for f, b in cases
        ]
        counted = count_all(jobs, counter=count)
        return {
            f"{f}-{b}": float(statistics.median(c.counts))
            for (f, b), c in zip(cases, counted, strict=True)
        }

    def track_pass_instructions(self, counts: dict[str, float], family: str, bindings: int):
        return counts[f"{family}-{bindings}"]
