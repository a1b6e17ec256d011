"""Building and running modules: the build pipeline, child processes, measurements.

Modules: :mod:`.pipeline` (TVM's build pipeline with its kill step chosen by name),
:mod:`.child` (the one protocol of child processes and their task registry),
:mod:`.peak` (measured peak memory and its calibration), :mod:`.vm_build`,
:mod:`.vm_measure` and :mod:`.vm_task` (building and exporting in the caller's process,
the parent's and the child's side of :func:`benchkill.measure_vm`), :mod:`.outputs` (the
VM's outputs against the framework's),
:mod:`.estimate` (:func:`benchkill.estimate_memory`: lower, then the liveness model),
:mod:`.trace` (the allocation trace of a VM run, ``measure_vm(..., trace=True)``),
:mod:`.replay` (the trace through the allocator models), :mod:`.walker` and
:mod:`.attribution` (the trace paired with the lowered module: variables, functions,
causes, the live set at the peak, the waste), :mod:`.explain` (what a peak is made of),
:mod:`.corpus` and :mod:`.corpus_task` (``benchkill equivalence``: the Relax modules of
Python files, each file checked in a child process).
Imports :mod:`benchkill.relax`, :mod:`benchkill.passes`, :mod:`benchkill.analysis`,
:mod:`benchkill.inputs` and :mod:`benchkill.errors`.
"""
