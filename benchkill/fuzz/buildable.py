"""Buildable programs: random high-level Relax programs, built with every kill variant and
run on the VM.

:func:`buildable_modules` draws ``R.add``/``R.multiply``/``R.subtract`` programs with
If/else; :func:`check_vm_equivalence` builds each with every kill variant of
:func:`benchkill.build_pipeline` in both exec modes, runs it and compares with the build
without kills; :func:`check_vm_equivalence_in_child` does so in a child process, so that a
VM crash (a segfault from a wrong kill) becomes a :class:`FuzzMismatch`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tvm
from hypothesis import assume
from hypothesis import strategies as st
from tvm import relax

from benchkill.errors import one_line
from benchkill.execution.child import run_task, set_stage, work_dir
from benchkill.fuzz.properties import FuzzMismatch
from benchkill.relax.text import module_text
from benchkill.vocabulary import COMPARED_KILLS, EXEC_MODES, kill_arg

_OPS = ("add", "multiply", "subtract")


@st.composite
def buildable_modules(draw, max_ops: int = 6):
    """``(mod, inputs)``: high-level R.add/R.multiply/R.subtract programs on float32[4]
    with If/else nested up to two deep (conditions: a parameter or a computed bool), in
    the form any kill variant of :func:`benchkill.build_pipeline` builds."""
    lines = [
        "@R.function",
        'def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32"),'
        ' flag: R.Tensor((), "bool")) -> R.Tensor((4,), "float32"):',
    ]
    names = iter(f"v{i}" for i in range(10_000))
    result = _text_scope(draw, lines, 1, ["x", "y"], draw(st.integers(1, max_ops)), names)
    lines.append(f"    return {result}")
    func = tvm.script.from_source("\n".join(lines))
    mod = tvm.IRModule({"main": func})
    # TVM's StaticPlanBlockMemory sometimes reuses a storage allocated inside an If
    # branch after the If (ill-formed IR that crashes the VM even without kills; see
    # tests/fuzz/test_fuzz.py): such programs test TVM's planner, not the kill passes.
    assume(_lowers_well_formed(mod))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.uniform(-2, 2, (4,)).astype("float32") for _ in range(2)]
    inputs.append(np.array(draw(st.booleans())))
    return mod, inputs


def _lowers_well_formed(mod: tvm.IRModule) -> bool:
    from benchkill.execution.pipeline import lower_to_kill_input

    try:
        relax.analysis.well_formed(lower_to_kill_input(mod))
    except Exception:  # well_formed raises TVM's error on the first violation
        return False
    return True


def _text_scope(draw, lines, depth, live, n_ops, names) -> str:
    """Append ``n_ops`` statements at indentation ``depth``; return the last value's name."""
    pad = "    " * depth
    live = list(live)
    for _ in range(n_ops):
        out = next(names)
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            cond = "flag"
            if draw(st.booleans()):
                cond = next(names)
                src = live[draw(st.integers(0, len(live) - 1))]
                lines.append(f'{pad}{cond} = R.greater(R.sum({src}), R.const(0, "float32"))')
            lines.append(f"{pad}if {cond}:")
            for branch in range(2):
                if branch:
                    lines.append(f"{pad}else:")
                last = _text_scope(draw, lines, depth + 1, live, draw(st.integers(1, 3)), names)
                lines.append(f"{pad}    {out} = {last}")
        else:
            op = draw(st.sampled_from(_OPS))
            a = live[draw(st.integers(0, len(live) - 1))]
            b = live[draw(st.integers(0, len(live) - 1))]
            lines.append(f"{pad}{out} = R.{op}({a}, {b})")
        live.append(out)
    return live[-1]


#: The kill variants a buildable program is built with (None: without kills, the reference).
VARIANTS = tuple(map(kill_arg, COMPARED_KILLS))


def check_vm_equivalence(
    mod: tvm.IRModule,
    inputs: list,
    variants=VARIANTS,
    exec_modes=EXEC_MODES,
    progress=None,
) -> None:
    """Build ``mod`` with each kill variant in each exec mode, run it, and compare with the
    build without kills; raises :class:`FuzzMismatch` on a difference or a failed build.

    ``progress(kill, mode)`` is called before each build (the child process of
    :func:`check_vm_equivalence_in_child` uses it to name the build that crashed).
    """
    from benchkill.execution.pipeline import build_pipeline

    args = [tvm.runtime.tensor(a) for a in inputs]
    reference = None
    for mode in exec_modes:
        for kill in (None, *[v for v in variants if v is not None]):
            if progress is not None:
                progress(kill, mode)
            try:
                ex = relax.build(
                    mod, "llvm", relax_pipeline=build_pipeline(kill=kill), exec_mode=mode
                )
                vm = relax.VirtualMachine(ex, tvm.cpu())
                out = vm["main"](*args).numpy()
            except Exception as exc:
                raise FuzzMismatch(f"kill={kill!r} exec_mode={mode}: {one_line(exc)}") from None
            if reference is None:
                reference = out
            elif not np.array_equal(out, reference, equal_nan=True):
                raise FuzzMismatch(
                    f"kill={kill!r} exec_mode={mode}: output {out} differs from {reference}"
                )


def check_vm_equivalence_in_child(mod: tvm.IRModule, inputs: list, timeout: float = 600.0) -> None:
    """:func:`check_vm_equivalence` in a child process (task :func:`vm_equivalence_task` of
    :mod:`benchkill.execution.child`), so a VM crash (a segfault from a wrong kill) becomes a
    :class:`FuzzMismatch` instead of killing the caller."""
    with work_dir("benchkill-fuzz-") as work:
        (work / "module.py").write_text(module_text(mod))
        np.savez(work / "inputs.npz", **{f"arg{i}": a for i, a in enumerate(inputs)})
        task = "benchkill.fuzz.buildable:vm_equivalence_task"
        outcome = run_task(task, {"n_inputs": len(inputs)}, work, timeout)
    result = outcome.result
    if result is None:
        if outcome.signal_name is not None:
            where = outcome.stage or "before the first build"
            raise FuzzMismatch(f"the VM process died of {outcome.signal_name} at {where}")
        raise FuzzMismatch(f"the VM process failed: {outcome.failure()}")
    if result.get("mismatch"):
        raise FuzzMismatch(result["mismatch"])
    if result.get("error"):
        raise FuzzMismatch(f"the VM process failed: {result['error']}")


def vm_equivalence_task(request: dict, work: Path) -> dict:
    """The child's side of :func:`check_vm_equivalence_in_child`: the stage names the
    build being made, so that a crash names it."""
    mod = tvm.script.from_source((work / "module.py").read_text())
    with np.load(work / "inputs.npz") as saved:
        inputs = [saved[f"arg{i}"] for i in range(request["n_inputs"])]

    def progress(kill, mode):
        set_stage(work, f"kill={kill!r} exec_mode={mode}")

    try:
        check_vm_equivalence(mod, inputs, progress=progress)
    except FuzzMismatch as exc:
        return {"mismatch": str(exc)}
    return {}
