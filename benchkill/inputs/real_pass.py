"""The ``real`` family of the pass benchmarks: the kill step's input of real PyTorch models.

Each case is a model of :data:`benchkill.inputs.real_models.MODELS` in one shape mode,
lowered by TVM's default pipeline up to just before KillAfterLastUse
(:func:`benchkill.inputs.real_models.kill_input`, quick sizes, cached per process): the
IR ``relax.build`` gives the pass on that model, with its canonicalization-heavy shape
(CallTIRRewrite's ``lv = alloc`` rebindings, VMShapeLower's heaps, calls re-inferred).

:data:`REAL_CASES` names them; the third field is the number of bindings of the kill
input measured with apache-tvm 0.27.0.post1 and torch 2.x on the quick sizes (the
nominal ``bindings`` of a case, as the ``model`` family's sizes are; the actual count is
recorded with each result).  The models need the ``[models]`` extra (torch,
torchvision): :func:`missing` says what is missing, so a suite can skip the family with
one line.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from benchkill.errors import BenchkillError

#: The family's name in the pass suite and the asv suite.
REAL = "real"
#: case -> (model, shape mode, nominal bindings): torchvision CNNs with a dynamic batch
#: and static, PyTorch's TransformerEncoder and a GPT-style decoder with a dynamic
#: sequence length.
REAL_CASES: dict[str, tuple[str, str, int]] = {
    "resnet18-unbounded": ("resnet18", "unbounded", 297),
    "resnet18-static": ("resnet18", "static", 285),
    "mobilenet_v3_small-unbounded": ("mobilenet_v3_small", "unbounded", 1035),
    "mobilenet_v3_small-static": ("mobilenet_v3_small", "static", 971),
    "encoder-unbounded": ("encoder", "unbounded", 338),
    "decoder-unbounded": ("decoder", "unbounded", 401),
}
#: Packages the family needs (the ``[models]`` extra).
NEEDS = ("torch", "torchvision")


def missing() -> str | None:
    """None when the real models can be built, else one line saying what to install."""
    absent = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    return f"family {REAL!r} skipped: it needs {' and '.join(absent)} (pip install -e '.[models]')"


def real_pass_input(case: str) -> Any:
    """The kill step's input of the real-model case ``case`` (cached per process)."""
    if case not in REAL_CASES:
        raise BenchkillError(f"unknown real case {case!r}; expected one of {', '.join(REAL_CASES)}")
    from benchkill.inputs.real_models import kill_input

    model, shape, _ = REAL_CASES[case]
    return kill_input(model, shape, quick=True)


def release() -> None:
    """Free the cached real models (a module kept alive slows TVM's pass on the next
    cases: :mod:`benchkill.inputs.models`)."""
    from benchkill.inputs.real_models import clear_cache

    clear_cache()


def pass_input(family: str, size: Any, seed: int = 0) -> Any:
    """The module of a pass benchmark case: ``real_pass_input(size)`` for the real family
    (``size`` names the case), else ``generate(family, int(size), seed)``."""
    if family == REAL:
        return real_pass_input(str(size))
    from benchkill.inputs.families import generate

    return generate(family, int(size), seed)
