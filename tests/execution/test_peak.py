"""Peak measurement, calibrated against known allocations (in this process and in a child)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from benchkill.errors import BenchkillError
from benchkill.execution.peak import measure_allocation, peak_supported, resident_bytes

MiB = 1 << 20

needs_proc = pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs")


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("mib", [64, 256])
def test_calibration_in_child_within_5_percent(mib):
    nbytes = mib * MiB
    measured = measure_allocation(nbytes)
    assert abs(measured / nbytes - 1) <= 0.05, (measured, nbytes)


@needs_proc
def test_peak_of_counts_the_result_it_keeps_alive():
    """In a fresh process, as measurements run: in the test process, memory freed by earlier
    tests may still be resident and hide the allocation (seen: a peak of 0)."""
    code = (
        "import numpy as np; from benchkill.execution.peak import peak_of; "
        "block, peak = peak_of(lambda: np.ones(64 << 20, dtype=np.uint8)); "
        "print(block.nbytes, peak)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    nbytes, peak = map(int, out.stdout.split())
    assert nbytes == 64 * MiB
    assert abs(peak / nbytes - 1) <= 0.05


@needs_proc
def test_resident_bytes_sees_a_written_buffer():
    before = resident_bytes()
    block = np.ones(64 * MiB, dtype=np.uint8)
    assert resident_bytes() - before == pytest.approx(block.nbytes, rel=0.05)


@pytest.mark.parametrize("nbytes", [0, -1, 1.5, True])
def test_measure_allocation_rejects_a_bad_size(nbytes):
    with pytest.raises(BenchkillError, match="nbytes must be a positive integer"):
        measure_allocation(nbytes)
