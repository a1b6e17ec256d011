"""Static analysis of lowered Relax modules: the kill checker and the memory model.

Modules: :mod:`.kill_rules` (the rules, one table, and :class:`~.kill_rules.Violation`),
:mod:`.verifier` (the checker, :func:`~.verifier.verify_kills`), :mod:`.nodes` (node kinds
and short texts), :mod:`.allocations` (bytes allocated in a module's text),
:mod:`.liveness` and :mod:`.frame` (the abstract execution that bounds live memory,
:class:`~.liveness.MemoryEstimate`).  Imports only :mod:`benchkill.relax` and
:mod:`benchkill.errors`; never the passes (it judges them) nor execution.
"""
