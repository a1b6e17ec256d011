"""Seeded, cached inputs shared by the asv suite, built on first use and never at import.

asv runs every benchmark in a process forked from its forkserver (``launch_method`` in
asv.conf.json), which imports the benchmark modules once.  So this module imports TVM
and the parts of benchkill the benchmarks use at import, once for the whole run, and not
in each of the run's 150 or so benchmark processes (0.6 s each here); with
``OPENBLAS_NUM_THREADS=1`` (unless set) the importing process has no thread but its own,
so forking it is safe.  It builds nothing at import (``asv check`` imports the suite
too): every module is built inside the functions below, which benchmark ``setup``
methods call.  asv re-runs ``setup`` before every timing sample; the caches make that
cheap, so the time goes to the samples and not to rebuilding the same module again.
"""

from __future__ import annotations

import importlib
import os
from functools import cache, lru_cache
from typing import Any

#: Loaded at import, once for asv's forkserver (see the module docstring).  Only a
#: preload: the functions below import what they use, so a commit that lacks one of
#: these modules fails in the benchmarks that need it, not in all of them.
PRELOADED = (
    "numpy",
    "tvm",
    "tvm.relax",
    "benchkill.passes",
    "benchkill.bench.suites.pass_suite",
    "benchkill.bench.suites.vm_suite",
    "benchkill.bench.suites.vm_parallel",
    "benchkill.bench.instructions",
    "benchkill.inputs.families",
    "benchkill.inputs.workloads",
    "benchkill.inputs.real_pass",
)

# numpy (which TVM imports) starts OpenBLAS's threads at import; a forked child of a
# process with threads may inherit a lock some thread held.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
for _name in PRELOADED:
    try:
        importlib.import_module(_name)
    except ImportError:
        pass

#: Seed of every generated module (a module is deterministic in family, size and seed).
SEED = 0
#: Generator families and sizes (Relax bindings of ``main``) of the pass benchmarks,
#: smallest first: the first value of every parameter is the cheapest case.
FAMILIES = ("chain", "mixed")
SIZES = (3_000, 30_000)
#: Sizes of the instruction counts: exact at 3,000 bindings already, and callgrind runs
#: the pass about 50 times slower (the 30,000-binding cases took 45 of asv --quick's 99 s
#: of pass benchmarks).
INSTRUCTION_SIZES = (3_000,)
#: Sizes of the ``model`` family (real decoders, lowered up to the kill step) and of the
#: peak-memory benchmarks (one process each: asv --quick stays within a minute).
MODEL_SIZES = (300, 3_000)
MEMORY_SIZES = (30_000,)
#: Cases of the ``real`` family (:data:`benchkill.inputs.real_pass.REAL_CASES`: PyTorch
#: models lowered up to the kill step; they need the ``[models]`` extra).
REAL_CASES = (
    "resnet18-unbounded",
    "resnet18-static",
    "mobilenet_v3_small-unbounded",
    "mobilenet_v3_small-static",
    "encoder-unbounded",
    "decoder-unbounded",
)
#: The two pass implementations compared.
IMPLS = ("benchkill", "tvm")

#: VM workloads (names of :data:`benchkill.inputs.workloads.WORKLOADS`, built with their
#: quick parameters: each variant is an LLVM build; the GPT-2-style decoder is 2 layers x
#: 128 and the conv net 2 stages on 64x64 images, each builds in seconds and runs in
#: milliseconds), exec modes and kill variants; "none" is the build without a kill step.
VM_WORKLOADS = ("chain", "if_chain", "gpt2", "convnet")
EXEC_MODES = ("bytecode", "compiled")
KILLS = ("none", "tvm", "benchkill", "beyond")
MEMORY_CFG = "pooled"


def new_pass_input(family: str, bindings: int) -> Any:
    """The module of ``family`` with about ``bindings`` bindings (seed :data:`SEED`), built
    anew: a ``setup_cache`` that measures case after case keeps no module of one case alive
    while it measures the next (a live decoder slows TVM's pass on other modules,
    :mod:`benchkill.inputs.models`)."""
    from benchkill.inputs.families import generate, ops_for_bindings

    return generate(family, ops_for_bindings(family, bindings), SEED)


@lru_cache(maxsize=1)
def pass_input(family: str, bindings: int) -> Any:
    """:func:`new_pass_input`, built once per process (asv's ``setup`` before each sample
    finds it); one module at most, so a process that measures several cases keeps none
    of an earlier case alive while it measures the next."""
    return new_pass_input(family, bindings)


def real_input(case: str) -> Any:
    """The kill step's input of the real-model ``case``, built once per process (the
    registry caches it), or NotImplementedError (asv skips the benchmark) without the
    ``[models]`` extra."""
    from benchkill.inputs.real_pass import missing, real_pass_input

    reason = missing()
    if reason is not None:
        raise NotImplementedError(reason)
    return real_pass_input(case)


@lru_cache(maxsize=1)
def passes() -> dict[str, Any]:
    """benchkill's and TVM's KillAfterLastUse, by implementation name."""
    from benchkill.bench.suites.pass_suite import implementations

    return implementations(include_naive=False)


def kill_variant(label: str) -> str | None:
    """The kill variant of :func:`benchkill.build_pipeline` that a ``kill`` label stands for."""
    return None if label == "none" else label


@cache
def workload(name: str) -> Any:
    """The VM workload ``name`` with its quick parameters (a
    :class:`benchkill.inputs.workloads.Workload`)."""
    from benchkill.inputs.workloads import make_workload

    return make_workload(name, quick=True)


def vm_arguments(name: str) -> list[Any]:
    """The inputs of ``workload(name)`` as VM arguments (tensors on the CPU, scalars as is)."""
    import numpy as np
    import tvm

    return [
        tvm.runtime.tensor(value, device=tvm.cpu()) if isinstance(value, np.ndarray) else value
        for value in workload(name).inputs
    ]
