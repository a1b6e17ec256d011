"""Layer ``results``: results files on disk.

- :mod:`.store`: the schema (:class:`~.store.Results`, :class:`~.store.ResultRecord`),
  atomic save and checked load;
- :mod:`.validation`: the impossible values a load rejects;
- :mod:`.atomic`, :mod:`.locking`: files written whole or not at all, one writer per file;
- :mod:`.recorder`: a run's file, saved after every finished case;
- :mod:`.asv_import`, :mod:`.pytest_import`: asv and pytest-benchmark results files
  read as benchkill results;
- :mod:`.loading`: :func:`~.loading.load_any` reads any of the three kinds.

May import only :mod:`benchkill.bench.model` and the foundation modules
(:mod:`benchkill.errors`, :mod:`benchkill.stats`).
"""
