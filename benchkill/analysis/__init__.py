"""Static analysis of lowered Relax modules: the kill checker and the memory model.

Modules: :mod:`.kill_rules` (the rules, one table, and :class:`~.kill_rules.Violation`),
:mod:`.verifier` (:func:`~.verifier.verify_kills`), :mod:`.kill_checker` and
:mod:`.kill_log` (the checker: every path, kills undone per If branch), :mod:`.nodes` (node
kinds, what an expression reads, short texts), :mod:`.allocations` (bytes allocated in a
module's text), :mod:`.vm_model` (the one symbolic model of the VM: frames, registers,
release rules; the kill checker, the liveness estimate and the trace's walker in
:mod:`benchkill.execution.walker` are its clients), :mod:`.liveness`,
:mod:`.machine` and :mod:`.frame` (the abstract execution that bounds live memory,
:class:`~.liveness.MemoryEstimate`), :mod:`.holders` and :mod:`.bindings`
(the live set at a peak and the waste of each variable, shared with the allocation
trace).  Imports only :mod:`benchkill.relax` and
:mod:`benchkill.errors`; never the passes (it judges them) nor execution.
"""
