"""pytest-benchmark's machine record, completed with what benchkill's own results record.

pytest-benchmark names the interpreter by its release only and knows nothing of the
malloc; benchkill's results files record both (:mod:`benchkill.bench.machine`), because
each moves the pass's times.  Added to ``machine_info``, they reach ``benchkill compare``
of the saved files (:mod:`benchkill.results.pytest_import`), and pytest-benchmark's own
``--benchmark-compare`` warns when they differ.
"""

from benchkill.bench.machine import malloc_in_use, python_build


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["python_build"] = python_build()
    machine_info["malloc"] = malloc_in_use()
