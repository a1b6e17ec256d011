"""The names benchkill gives what it measures, written once (foundation: every layer may
import it).

The command line's choices, the suites' case parameters, the figures' orders and colours
and the library's arguments all take their names from these tables, so a kill variant,
an exec mode or an equivalence stage is spelled the same in ``benchkill memory --kill``,
in a results file's ``params`` and in a figure's legend.  The module imports nothing (no
TVM): ``benchkill COMMAND --help`` lists the choices without loading a compiler.
"""

from __future__ import annotations

# --- kill variants ------------------------------------------------------------------

#: The kill variant without a kill step: the library's ``kill=None``, a record's
#: ``params["kill"]`` null.
NO_KILLS = "none"
#: Kill variant -> what runs in place of TVM's KillAfterLastUse step, in the order tables,
#: figures and legends list them (the baseline without kills first).
KILL_VARIANTS = {
    NO_KILLS: "no kill step",
    "tvm": "TVM's C++ pass (relax.transform.KillAfterLastUse)",
    "benchkill": "benchkill's pass, output equal to TVM's",
    "beyond": "benchkill's, also killing after an If (TVM's pass stops there)",
    "legacy": "benchkill's with the pre-fix bug: kills R.null_value() results",
}
#: Every kill variant's name, in order.
KILLS = tuple(KILL_VARIANTS)
#: The variants that run a kill pass (what ``benchkill apply --kill`` takes).
KILL_PASSES = KILLS[1:]
#: The variants a VM measurement compares unless told otherwise (the vm suite, the asv
#: suite, ``benchkill memory``); the first, without kills, is the reference.
COMPARED_KILLS = (NO_KILLS, "tvm", "benchkill", "beyond")


def kill_arg(name: str) -> str | None:
    """A kill variant's name as the library's ``kill=`` takes it: ``"none"`` -> None."""
    return None if name == NO_KILLS else name


def kill_name(kill: object) -> str:
    """The name of the library's ``kill=`` value (a record's ``params["kill"]``): None ->
    ``"none"``."""
    return NO_KILLS if kill is None else str(kill)


# --- the Relax VM ---------------------------------------------------------------------

#: ``relax.build(..., exec_mode=...)``: the VM interprets bytecode or runs compiled code.
EXEC_MODES = ("bytecode", "compiled")
#: ``memory_cfg`` of the VM's allocator: ``pooled`` keeps freed buffers for reuse by a
#: request of the same page-rounded size, ``naive`` frees at once.
MEMORY_CFGS = ("pooled", "naive")

# --- benchmark suites ----------------------------------------------------------------

#: Suite -> what it measures (``benchkill run --suite``, a record's ``suite``).
SUITES = {
    "pass": "time of benchkill's pass, TVM's C++ pass, a naive port and the floor",
    "vm": "peak memory and run time of each kill variant on the Relax VM",
}
#: The pass suite's implementations, in the order tables and figures list them; the
#: floor is the FFI work no exact Python pass can skip, timed beside them.
IMPLS = ("benchkill", "tvm", "naive", "floor")

#: The family of real decoders (``relax.frontend.nn`` models lowered to the kill step).
MODEL_FAMILY = "model"
#: Generator family (``benchkill.generate(FAMILY, N)``) -> what its ``main`` is made of.
FAMILIES = {
    "chain": "per op an alloc_storage, an alloc_tensor on it and a call reading the previous "
    "tensor",
    "fanout": "each tensor read by several later 3-input ops, so last uses lie far from "
    "definitions",
    "planned": "4 storages allocated up front, each reused by many tensors in turn, as after "
    "static memory planning",
    "shape_heap": "chain ops each checked by a match_shape call on one VMShapeLower-style "
    "R.null_value() heap",
    "control": "chain ops and If/else blocks nested up to 3 deep; conditions are a bool "
    "parameter or a computed bool",
    "mixed": "all of the above plus constants, trivial rebindings, match_cast, tuples, shape "
    "and prim values, pre-existing kills",
    MODEL_FAMILY: "GPT-style relax.frontend.nn decoders (embedding, layers of attention + "
    "MLP, symbolic sequence length) lowered by TVM's default pipeline up to its kill step",
}

# --- checks of the pass's output -----------------------------------------------------

#: Where ``benchkill equivalence`` runs both passes: on the module as written, lowered by
#: the default pipeline up to the kill step, and lowered with TVM's kills already in it.
EQUIVALENCE_STAGES = ("as-written", "lowered", "rekilled")

#: Kill rule (a violation ``benchkill verify`` reports) -> its one-line meaning, in the
#: order the rules are checked (:data:`benchkill.analysis.kill_rules.TABLE`).
KILL_RULES = {
    "kill-malformed": "the kill's argument is not exactly one variable",
    "use-out-of-scope": "use or kill of a variable outside the scope that defines it "
    "(ill-formed IR)",
    "kill-null-value": "kill of a variable bound to R.null_value() (no VM register)",
    "kill-constant": "kill of a variable bound to a constant (no VM register)",
    "kill-no-register-type": "kill of a FuncType/ShapeType/PrimType variable (no VM register)",
    "double-kill": "kill of a variable already killed on some path",
    "kill-param": "kill of a function parameter",
    "kill-output": "kill of a variable the function returns",
    "use-after-kill": "use of a variable killed on some path to the use",
    "missed-kill": "tensor or storage not killed after its last use (expect_complete)",
}
