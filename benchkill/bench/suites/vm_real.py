"""The real models' cases of the "vm" suite (:mod:`benchkill.inputs.real_models`).

A case is one real model (PyTorch, random weights, its outputs checked against
PyTorch's) in one shape mode, exec mode and allocator, measured like every "vm" case
(:func:`~benchkill.bench.suites.vm_suite.measure_workload`: every kill variant, a traced
run each, the static bound), except that a variant whose killed module equals one
measured before (benchkill's and beyond's equal TVM's on these models, which have no
``If``) is not built and run again (``reuse_equal_programs``), and 3 timed runs.

- ``--quick``: :data:`QUICK`, one small model where kills matter: SqueezeNet 1.0 on 2
  images of 64x64, dynamic batch with no upper bound, naive allocator (kills free the
  storages the planner sized by the batch; the pooled allocator would keep them).
- full: :data:`FULL`, every model with an unbounded dynamic dimension in both exec modes
  (where kills matter, :doc:`/notes/real-models`), SqueezeNet also static and bounded
  (where the planner leaves kills nothing), and with the naive allocator; the registry's
  full sizes.
"""

from __future__ import annotations

import importlib.util
import sys

from benchkill.bench.model import CaseSpec
from benchkill.inputs import workloads
from benchkill.vocabulary import EXEC_MODES

#: (model, shape mode, exec mode, allocator) of the quick run.
QUICK = (("squeezenet1_0", "unbounded", "bytecode", "naive"),)
#: The same for a full run.
FULL = (
    *((name, "unbounded", mode, "pooled") for name in workloads.REAL_MODELS for mode in EXEC_MODES),
    ("squeezenet1_0", "static", "bytecode", "pooled"),
    ("squeezenet1_0", "bounded", "bytecode", "pooled"),
    ("squeezenet1_0", "unbounded", "bytecode", "naive"),
    ("squeezenet1_0", "unbounded", "compiled", "naive"),
)


def real_cases(quick: bool) -> list[CaseSpec]:
    """The real models' cases of a quick or a full run (module docstring); none, and one
    line on stderr, without the ``[models]`` extra (what they need is not installed)."""
    cases = []
    chosen = QUICK if quick else FULL
    needs = {n for name, *_ in chosen for n in workloads.WORKLOADS[name].needs}
    absent = sorted(n for n in needs if importlib.util.find_spec(n) is None)
    if absent:
        print(
            f"vm suite: the real models skipped: they need {' and '.join(absent)} "
            "(pip install -e '.[models]')",
            file=sys.stderr,
        )
        return []
    for name, shape, exec_mode, memory_cfg in chosen:
        params = workloads.WORKLOADS[name].parameters(quick)
        params.update(shape=shape, repeat=3, reuse_equal_programs=True)
        params.update(workload=name, exec_mode=exec_mode, memory_cfg=memory_cfg)
        cases.append(CaseSpec("vm", name, params))
    return cases
