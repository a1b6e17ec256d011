"""Static analysis of lowered Relax modules: the kill checker and the memory model.

Modules: :mod:`.kill_rules` (the rules, one table, and :class:`~.kill_rules.Violation`),
:mod:`.verifier` (the checker, :func:`~.verifier.verify_kills`), :mod:`.nodes` (node kinds
and short texts), :mod:`.allocations` (bytes allocated in a module's text),
:mod:`.vm_model` (the one symbolic model of the VM: frames, registers, release rules;
the trace's walker in :mod:`benchkill.execution.walker` uses it too), :mod:`.liveness`,
:mod:`.machine` and :mod:`.frame` (the abstract execution that bounds live memory,
:class:`~.liveness.MemoryEstimate`), :mod:`.holders` and :mod:`.bindings`
(the live set at a peak and the waste of each variable, shared with the allocation
trace).  Imports only :mod:`benchkill.relax` and
:mod:`benchkill.errors`; never the passes (it judges them) nor execution.
"""
