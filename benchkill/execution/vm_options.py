"""The options of a VM measurement, one object for :func:`benchkill.measure_vm` and
:func:`~benchkill.execution.vm_measure.measure_vm_variants`.

Both took the same eight keywords (``exec_mode``, ``memory_cfg``, ``repeat``,
``peak_repeat``, ``func``, ``timeline``, ``rekill``, ``timeout``); they now take one
:class:`VMOptions`.  The keywords still work for one release: :func:`merge_options`
turns them into options and warns (``DeprecationWarning``) once per call.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, fields, replace
from typing import Any

from benchkill.errors import BenchkillError, check_int
from benchkill.vocabulary import EXEC_MODES, MEMORY_CFGS

#: Seconds a child may take (build and all runs) before it is killed.
DEFAULT_TIMEOUT = 600.0


@dataclass(frozen=True)
class VMOptions:
    """How a module is built, run and measured on the VM (checked when made).

    Parameters
    ----------
    exec_mode : {"bytecode", "compiled"}
        ``relax.build``'s exec_mode.
    memory_cfg : {"pooled", "naive"}
        The VM's allocator ("naive" frees at once; "pooled" keeps freed buffers).
    repeat : int
        Timed runs after one warm-up (0: none).
    peak_repeat : int
        Runs measured for the peak, each on a fresh VM (at least 1).
    func : str
        The Relax function to run.
    timeline : bool
        Record the memory timeline (bytecode mode only).
    rekill : bool
        The upstream #20200 scenario: TVM's default pipeline, the kill pass once more,
        then a build with ``relax_pipeline="zero"``.
    timeout : float
        Seconds before a measuring child is killed (recorded as an error).
    """

    exec_mode: str = "bytecode"
    memory_cfg: str = "pooled"
    repeat: int = 5
    peak_repeat: int = 3
    func: str = "main"
    timeline: bool = True
    rekill: bool = False
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        if self.exec_mode not in EXEC_MODES:
            raise BenchkillError(
                f"exec_mode must be one of {', '.join(EXEC_MODES)}, not {self.exec_mode!r}"
            )
        if self.memory_cfg not in MEMORY_CFGS:
            raise BenchkillError(
                f"memory_cfg must be one of {', '.join(MEMORY_CFGS)}, not {self.memory_cfg!r}"
            )
        check_int(self.repeat, "repeat", low=0)
        check_int(self.peak_repeat, "peak_repeat")
        if not isinstance(self.func, str) or not self.func:
            raise BenchkillError(f"func must be a function name, not {self.func!r}")
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise BenchkillError(f"timeout must be a number of seconds, not {timeout!r}")
        if not (math.isfinite(timeout) and timeout > 0):
            raise BenchkillError(f"timeout must be a positive number of seconds, not {timeout!r}")


#: The keywords :class:`VMOptions` replaces.
OPTION_NAMES = tuple(f.name for f in fields(VMOptions))


def merge_options(options: VMOptions | None, old: dict[str, Any], where: str) -> VMOptions:
    """``options`` (default: :class:`VMOptions()`) with the deprecated keywords ``old``
    of the function ``where`` applied; a DeprecationWarning if there are any, a TypeError
    (as Python's own) for a keyword that is no option."""
    unknown = [k for k in old if k not in OPTION_NAMES]
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    if options is not None and not isinstance(options, VMOptions):
        raise BenchkillError(f"{where}: options must be a VMOptions, not {type(options).__name__}")
    options = options or VMOptions()
    if not old:
        return options
    warnings.warn(
        f"{where}({', '.join(f'{k}=...' for k in old)}) is deprecated; pass "
        f"options=benchkill.VMOptions({', '.join(f'{k}=...' for k in old)}) instead",
        DeprecationWarning,
        stacklevel=3,
    )
    return replace(options, **old)
