"""The fuzzing properties of benchkill's KillAfterLastUse against TVM's, on one module.

:func:`check_example` raises :class:`FuzzMismatch` when one fails, in the caller's
PassContext and under ``PassContext(opt_level=0)``:

1. benchkill's pass (default mode) gives a module structurally equal to TVM's
   ``relax.transform.KillAfterLastUse``, or both raise (and the other modes too);
2. ``verify_kills`` finds no violation in any output of any mode; with ``expect_complete``
   it finds, in TVM-compatible mode, only the missed kills TVM keeps on purpose
   (:func:`tvm_keeps_on_purpose`: in a scope, at or after its first nested scope), and
   none at all in ``tvm_compatible=False`` mode; the legacy mode
   (``exclude_null_value=False``) breaks no rule but kill-null-value;
3. without their kills, the outputs of the other modes equal the default's (they
   canonicalize as TVM's pass does).

:data:`KNOWN_FAILURES` names the generator options whose inputs are known to break them.
"""

from __future__ import annotations

import re

import tvm
import tvm_ffi
from tvm import relax

from benchkill.analysis.verifier import Violation, verify_kills
from benchkill.errors import one_line

#: Generator options that reach known failures of the properties, off by default.
KNOWN_FAILURES = {
    "string_vars": "bind R.str values to variables: TVM's pass kills them (no VM register), "
    "both VM code generators then fail",
    "branch_kills": "pre-existing kills of outer values inside an If branch: both passes then "
    "kill the value on no other path (missed kills, also in tvm_compatible=False mode)",
}


class FuzzMismatch(AssertionError):
    """A property failed on a drawn module (the message says which and how)."""


def _passes():
    from benchkill.passes import KillAfterLastUse

    return (
        relax.transform.KillAfterLastUse(),
        KillAfterLastUse(),
        KillAfterLastUse(tvm_compatible=False),
        KillAfterLastUse(exclude_null_value=False),
    )


def _run(kill_pass, mod):
    try:
        return kill_pass(mod), None
    except Exception as exc:  # TVM raises its own error classes, benchkill BenchkillError
        return None, exc


#: The PassContexts every property is checked in: the caller's, and one in which
#: ``opt_level=0`` skips every pass a Sequential would run at level 1 (TVM's module pass
#: CanonicalizeBindings among them).
CONTEXTS = {"default": None, "opt_level=0": {"opt_level": 0}}


def check_example(mod: tvm.IRModule) -> None:
    """The fuzzing properties on ``mod``, in each of :data:`CONTEXTS`; raises
    :class:`FuzzMismatch` when one fails.

    1. benchkill's default output is structurally equal to TVM's, or both raise (and then
       the other modes raise too);
    2. ``verify_kills`` runs on every output of every mode: the default output has no
       violation but the missed kills TVM keeps on purpose (:func:`tvm_keeps_on_purpose`),
       the ``tvm_compatible=False`` output none at all, even with ``expect_complete``, the
       legacy output (``exclude_null_value=False``) none but kill-null-value;
    3. the other modes canonicalize as TVM's pass does: without their kills, their outputs
       equal the default output without its kills.
    """
    for label, options in CONTEXTS.items():
        if options is None:
            _check_in_context(mod, "")
        else:
            with tvm.transform.PassContext(**options):
                _check_in_context(mod, f" under PassContext({label})")


def _check_in_context(mod: tvm.IRModule, where: str) -> None:
    tvm_pass, default_pass, beyond_pass, legacy_pass = _passes()
    expected, tvm_error = _run(tvm_pass, mod)
    actual, error = _run(default_pass, mod)
    if (tvm_error is None) != (error is None):
        raise FuzzMismatch(
            f"only {'TVM' if tvm_error else 'benchkill'} raised{where}: {tvm_error or error!r}"
        )
    outputs = {}
    for label, kill_pass in (("tvm_compatible=False", beyond_pass), ("legacy", legacy_pass)):
        out, mode_error = _run(kill_pass, mod)
        if (mode_error is None) != (tvm_error is None):
            what = "raised where TVM did not" if mode_error else "did not raise where TVM did"
            raise FuzzMismatch(f"{label} {what}{where}: {mode_error or tvm_error!r}")
        outputs[label] = out
    if tvm_error is not None:
        return
    try:
        tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    except ValueError as exc:
        first = str(exc).partition("\n")[0]  # the rest prints both modules
        raise FuzzMismatch(
            f"benchkill's output differs from TVM's{where}: {one_line(first)}"
        ) from None
    for violation in verify_kills(actual, expect_complete=True):
        if violation.rule != "missed-kill":
            raise FuzzMismatch(f"verify_kills on the default output{where}: {violation}")
        if not tvm_keeps_on_purpose(actual, violation):
            raise FuzzMismatch(f"missed kill TVM does not explain{where}: {violation}")
    bare = _without_kills(actual)
    for label, out in outputs.items():
        if label == "legacy":
            bad = [v for v in verify_kills(out) if v.rule != "kill-null-value"]
        else:
            bad = verify_kills(out, expect_complete=True)
        if bad:
            raise FuzzMismatch(f"verify_kills on the {label} output{where}: {bad[0]}")
        if not tvm_ffi.structural_equal(_without_kills(out), bare, map_free_vars=True):
            raise FuzzMismatch(f"the {label} output{where} is not canonicalized as TVM's")


def _without_kills(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` without any kill binding (those of the input included)."""
    from benchkill.passes.fallback import without_kills

    return tvm.IRModule(
        {
            gv: without_kills(f) if isinstance(f, relax.Function) else f
            for gv, f in mod.functions_items()
        }
    )


_POSITION = re.compile(r"^(?P<scope>(?:\d+\.(?:then|else)\.)*)(?P<index>\d+)$")


def tvm_keeps_on_purpose(mod: tvm.IRModule, violation: Violation) -> bool:
    """Whether ``violation`` is a missed kill TVM's pass leaves by design: after the first
    binding of a scope that holds a nested scope (an ``If`` or a local function), TVM emits
    no kill in that scope."""
    if violation.rule != "missed-kill":
        return False
    match = _POSITION.match(violation.binding)
    if match is None:
        return False
    scope = mod[violation.function].body
    parts = match["scope"].split(".")[:-1]
    for index, branch in zip(parts[::2], parts[1::2], strict=True):
        node = _bindings(scope)[int(index)].value
        scope = node.true_branch if branch == "then" else node.false_branch
    bindings = _bindings(scope)
    last_use = int(match["index"])
    return any(isinstance(b.value, relax.If | relax.Function) for b in bindings[: last_use + 1])


def _bindings(seq) -> list:
    return [b for block in seq.blocks for b in block.bindings]
