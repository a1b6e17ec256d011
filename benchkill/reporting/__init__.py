"""Layer ``reporting``: what results mean and how they are shown.

Owns :mod:`.verdicts` (compare's classification), :mod:`.formatting` (values and
comparison rows as text), :mod:`.targets` (the project's target figures), :mod:`.headline`
(speedups, memory saved, targets met: the answers a report leads with),
:mod:`.warnings` (why two runs may not compare), :mod:`.palette` (the colours, orders and
styles of every figure), :mod:`.plot` (figures, drawn by :mod:`.plot_pass`,
:mod:`.plot_vm`, :mod:`.plot_timeline` and :mod:`.plot_history` over :mod:`.plot_base`),
:mod:`.markdown` (the report) and :mod:`.trust` (A/A and A/B runs of compare, through
``benchkill run`` child processes).  May import only :mod:`benchkill.results`,
:mod:`benchkill.bench.model` and the foundation modules (errors, hooks, stats).
"""
