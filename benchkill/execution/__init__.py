"""Building and running modules: the build pipeline, child processes, measurements.

Modules: :mod:`.pipeline` (TVM's build pipeline with its kill step chosen by name),
:mod:`.child` (the one protocol of child processes and their task registry),
:mod:`.peak` (measured peak memory and its calibration), :mod:`.vm_measure` and
:mod:`.vm_task` (the parent's and the child's side of :func:`benchkill.measure_vm`),
:mod:`.estimate` (:func:`benchkill.estimate_memory`: lower, then the liveness model).
Imports :mod:`benchkill.relax`, :mod:`benchkill.passes`, :mod:`benchkill.analysis`,
:mod:`benchkill.inputs` and :mod:`benchkill.errors`.
"""
