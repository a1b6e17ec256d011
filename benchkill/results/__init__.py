"""Layer ``results``: results files on disk.

Owns :mod:`.store` (the schema, atomic save, checked load) and :mod:`.asv_import` (asv
result files read as benchkill results; :func:`~.asv_import.load_any` reads either kind).
May import only :mod:`benchkill.bench.model` and the foundation modules
(:mod:`benchkill.errors`, :mod:`benchkill.stats`).
"""
