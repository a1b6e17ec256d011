"""The fuzzing properties of benchkill's KillAfterLastUse against TVM's, on one module.

:func:`check_example` raises :class:`FuzzMismatch` when one fails:

1. benchkill's pass (default mode) gives a module structurally equal to TVM's
   ``relax.transform.KillAfterLastUse``, or both raise;
2. ``verify_kills`` finds no violation in benchkill's output in either mode; with
   ``expect_complete`` it finds, in TVM-compatible mode, only the missed kills TVM keeps on
   purpose (:func:`tvm_keeps_on_purpose`: in a scope, at or after its first ``If``), and
   none at all in ``tvm_compatible=False`` mode;
3. the legacy mode (``exclude_null_value=False``) breaks no rule but kill-null-value.

:data:`KNOWN_FAILURES` names the generator options whose inputs are known to break them.
"""

from __future__ import annotations

import re

import tvm
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


def check_example(mod: tvm.IRModule) -> None:
    """The fuzzing properties on ``mod``; raises :class:`FuzzMismatch` when one fails.

    1. benchkill's default output is structurally equal to TVM's, or both raise;
    2. ``verify_kills`` finds no unsafe kill in the default and ``tvm_compatible=False``
       outputs; the only missed kills of the default output are those TVM keeps on purpose
       (:func:`tvm_keeps_on_purpose`), and the ``tvm_compatible=False`` output has none;
    3. the legacy output (``exclude_null_value=False``) breaks no rule but kill-null-value.
    """
    tvm_pass, default_pass, beyond_pass, legacy_pass = _passes()
    expected, tvm_error = _run(tvm_pass, mod)
    actual, error = _run(default_pass, mod)
    if (tvm_error is None) != (error is None):
        raise FuzzMismatch(
            f"only {'TVM' if tvm_error else 'benchkill'} raised: {tvm_error or error!r}"
        )
    if tvm_error is not None:
        return
    try:
        tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    except ValueError as exc:
        where = str(exc).partition("\n")[0]  # the rest prints both modules
        raise FuzzMismatch(f"benchkill's output differs from TVM's: {one_line(where)}") from None
    for label, kill_pass in (("tvm_compatible=False", beyond_pass), ("legacy", legacy_pass)):
        out, error = _run(kill_pass, mod)
        if error is not None:
            raise FuzzMismatch(f"{label} raised where TVM did not: {error!r}")
        if label == "legacy":
            bad = [v for v in verify_kills(out) if v.rule != "kill-null-value"]
        else:
            bad = verify_kills(out, expect_complete=True)
        if bad:
            raise FuzzMismatch(f"verify_kills on the {label} output: {bad[0]}")
    for violation in verify_kills(actual, expect_complete=True):
        if violation.rule != "missed-kill":
            raise FuzzMismatch(f"verify_kills on the default output: {violation}")
        if not tvm_keeps_on_purpose(actual, violation):
            raise FuzzMismatch(f"missed kill TVM does not explain: {violation}")


_POSITION = re.compile(r"^(?P<scope>(?:\d+\.(?:then|else)\.)*)(?P<index>\d+)$")


def tvm_keeps_on_purpose(mod: tvm.IRModule, violation: Violation) -> bool:
    """Whether ``violation`` is a missed kill TVM's pass leaves by design: after the first
    binding of a scope that holds a nested ``If``, TVM emits no kill in that scope."""
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
    return any(isinstance(b.value, relax.If) for b in bindings[: last_use + 1])


def _bindings(seq) -> list:
    return [b for block in seq.blocks for b in block.bindings]
