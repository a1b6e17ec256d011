"""Child of :mod:`benchkill.bench.instructions`: count single pass applications.

Runs under ``valgrind --tool=callgrind --instr-atstart=no`` as
``python -P -m benchkill.bench.instructions_child HOOKS IMPL REPEATS CASE...`` (HOOKS:
the path of pytest-codspeed's compiled client-request hooks; each CASE is
``FAMILY:N_OPS:SEED``, or ``real:NAME:SEED`` for a case of the real family: the model is
exported and lowered in this child, uncounted, about 60 times slower than natively).
The cases are counted one after the other in this one process (importing TVM under
valgrind is most of a child's cost: ~10 of its 12 s on a 3,000-binding case).  Nothing
is counted while a module is generated and the pass made; then the pass is applied
``1 + REPEATS`` times to it, each in its own window::

    gc.collect(); CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION
    out = pass_(mod)
    CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("benchkill-instr:<label>")
    del out                                 # freeing the output is not counted

so callgrind writes one file per window whose ``totals:`` line is that window's count;
the labels are ``<case>:warmup`` (the first application: imports and caches) and
``<case>:repeat-<i>``, ``<case>`` being the case's index in the arguments.  Everything
alive is collected and frozen once before each case's windows, as benchkill's timing
loop does.  The last line of stdout is ``INSTR_RESULT {json}``.
"""

from __future__ import annotations

import ctypes
import gc
import importlib.machinery
import importlib.util
import json
import os
import resource
import sys

LABEL_PREFIX = "benchkill-instr:"
RESULT_PREFIX = "INSTR_RESULT "


class FloorOf:
    """``floor``: the floor work of each module's ``main``
    (:func:`benchkill.passes.profile.floor_work`), found by :meth:`prepare` outside the
    windows, so a window counts :meth:`FloorWork.run` alone."""

    def __init__(self) -> None:
        self.work = None

    def prepare(self, mod) -> None:
        from benchkill.passes.profile import floor_work

        self.work = floor_work(mod["main"])

    def __call__(self, mod):
        return self.work.run()


class Callgrind:
    """Callgrind's client requests, through pytest-codspeed's compiled hooks.

    ``start``/``stop`` are the extension module's own no-argument functions (the
    cheapest call from Python, so a window holds little besides the pass); ``zero`` and
    ``dump`` are the same library's C functions through ctypes, outside the windows.
    The library is loaded from its file: importing ``pytest_codspeed`` would import
    pytest.  Outside valgrind every request does nothing.
    """

    def __init__(self, path: str) -> None:
        loader = importlib.machinery.ExtensionFileLoader("dist_instrument_hooks", path)
        spec = importlib.util.spec_from_file_location("dist_instrument_hooks", path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        self.start = module.callgrind_start_instrumentation
        self.stop = module.callgrind_stop_instrumentation
        lib = ctypes.CDLL(path)
        lib.running_on_valgrind.restype = ctypes.c_uint8
        lib.running_on_valgrind.argtypes = []
        lib.callgrind_zero_stats.restype = None
        lib.callgrind_zero_stats.argtypes = []
        lib.callgrind_dump_stats_at.restype = None
        lib.callgrind_dump_stats_at.argtypes = [ctypes.c_char_p]
        self._lib = lib

    def on_valgrind(self) -> bool:
        return bool(self._lib.running_on_valgrind())

    def zero(self) -> None:
        self._lib.callgrind_zero_stats()

    def dump(self, label: str) -> None:
        self._lib.callgrind_dump_stats_at((LABEL_PREFIX + label).encode("ascii"))


def make_pass(impl: str):
    """The pass of implementation ``impl`` (one of :data:`benchkill.vocabulary.IMPLS`)."""
    if impl == "benchkill":
        from benchkill.passes import KillAfterLastUse

        return KillAfterLastUse()
    if impl == "tvm":
        from tvm import relax

        return relax.transform.KillAfterLastUse()
    if impl == "naive":
        from benchkill.passes.naive import NaiveKillAfterLastUse

        return NaiveKillAfterLastUse()
    if impl == "floor":
        return FloorOf()
    raise SystemExit(f"instructions_child: unknown implementation {impl!r}")


def windows(pass_, mod, repeats: int, cg: Callgrind, case: int = 0) -> None:
    """The warm-up window, then ``repeats`` windows; one callgrind dump each."""
    labels = [f"{case}:warmup"] + [f"{case}:repeat-{i}" for i in range(repeats)]
    start, stop, zero, dump, collect = cg.start, cg.stop, cg.zero, cg.dump, gc.collect
    collect()
    gc.freeze()
    try:
        for label in labels:
            collect()
            zero()
            start()
            out = pass_(mod)
            stop()
            dump(label)
            del out
    finally:
        gc.unfreeze()


def main(argv: list[str]) -> int:
    hooks, impl, repeats, *cases = argv
    cg = Callgrind(hooks)
    import tvm

    from benchkill.inputs.real_pass import pass_input
    from benchkill.relax.counting import count_bindings

    pass_ = make_pass(impl)
    bindings = []
    for index, case in enumerate(cases):
        family, size, seed = case.split(":")
        mod = pass_input(family, size, int(seed))
        if isinstance(pass_, FloorOf):
            pass_.prepare(mod)
        windows(pass_, mod, int(repeats), cg, index)
        bindings.append(count_bindings(mod))
        del mod
    usage = resource.getrusage(resource.RUSAGE_SELF)  # valgrind and its guest: one process
    result = {
        "pid": os.getpid(),
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "on_valgrind": cg.on_valgrind(),
        "bindings": bindings,
        "tvm_version": tvm.__version__,
    }
    print(RESULT_PREFIX + json.dumps(result, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
