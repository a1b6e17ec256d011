"""Any results file the commands read, as benchkill results: :func:`load_any` tells a
benchkill results file from an asv or a pytest-benchmark results file by its contents
and converts the other two (:mod:`.asv_import`, :mod:`.pytest_import`)."""

from __future__ import annotations

from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.results.asv_import import from_asv
from benchkill.results.pytest_import import from_pytest_benchmark, is_pytest_benchmark
from benchkill.results.store import Results, from_dict, read_json


def load_any(path: Path) -> Results:
    """A benchkill results file, or an asv or pytest-benchmark results file converted to
    the same form."""
    path = Path(path)
    data = read_json(path)
    if isinstance(data, dict) and "result_columns" in data and "results" in data:
        return from_asv(data, path)
    if isinstance(data, dict) and "schema_version" in data:
        return from_dict(data, path)
    if is_pytest_benchmark(data):
        return from_pytest_benchmark(data, path)
    raise BenchkillError(
        f"{path}: neither a benchkill results file nor an asv or pytest-benchmark results file"
    )
