"""Layer ``bench``: the record model and the measuring of the suites.

Owns :mod:`.model` (CaseSpec, Record, Machine, statuses, the one measurement label),
:mod:`.timing` (interleaved timing), :mod:`.machine` (this machine's metadata),
:mod:`.runner` (the run loop of ``benchkill run``, reporting to a record sink),
:mod:`.instructions`, :mod:`.instructions_child` and :mod:`.instruction_records`
(instruction counts under callgrind, ``run --instructions``) and :mod:`.suites` (pass and
vm).  May import :mod:`benchkill.passes`, :mod:`benchkill.inputs`,
:mod:`benchkill.execution`, :mod:`benchkill.relax`, :mod:`benchkill.analysis` and the
foundation modules, never :mod:`benchkill.results` (which stores what the runner gives
it); :mod:`.model` imports nothing of benchkill.
"""
