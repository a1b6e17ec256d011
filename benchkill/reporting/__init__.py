"""Layer ``reporting``: what results mean and how they are shown.

Owns :mod:`.verdicts` (compare's classification), :mod:`.formatting` (values and
comparison rows as text), :mod:`.targets` (the issues' target figures), :mod:`.plot`
(figures), :mod:`.markdown` (the report) and :mod:`.trust` (A/A and A/B runs of compare,
through ``benchkill run`` child processes).  May import only :mod:`benchkill.results`,
:mod:`benchkill.bench.model` and the foundation modules (errors, hooks, stats).
"""
