"""Figures, from records shaped as the suites write them."""

import xml.etree.ElementTree as ET

import matplotlib
import pytest

from benchkill.errors import BenchkillError
from benchkill.reporting.plot import plot_results
from tests.conftest import pass_records, suites_run, vm_records


def svg_text(path):
    return " ".join(t.text or "" for t in ET.parse(path).iter() if t.tag.endswith("text"))


def test_all_figures_from_a_pass_run_and_a_later_vm_run(tmp_path):
    # each figure reads the newest run that has its records
    pass_run = suites_run(pass_records(families=("chain",)), "2025-01-01T00:00:00+00:00")
    vm_run = suites_run(vm_records(("mlp",)), "2025-01-02T00:00:00+00:00")
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # keep text searchable in the SVG
        output = plot_results([vm_run, pass_run], tmp_path)
    stems = ("pass_time_scaling", "vm_peak_memory", "memory_timeline_mlp", "vm_run_time")
    assert sorted(p.name for p in output.paths) == sorted(
        f"{stem}.{ext}" for stem in stems for ext in ("png", "svg")
    )
    for path in output.paths:
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert output.notes == ("skipped history: no benchmark appears in two or more runs",)
    legend = svg_text(tmp_path / "pass_time_scaling.svg")
    # time = c * n gives slope 1, time = c * n^2 gives slope 2
    assert "benchkill (slope 1.00)" in legend and "naive (slope 2.00)" in legend
    peak = svg_text(tmp_path / "vm_peak_memory.svg")
    assert "liveness bound" in peak and "kill=none, compiled" in peak
    timeline = svg_text(tmp_path / "memory_timeline_mlp.svg")
    assert "kill=benchkill" in timeline and "kill=none" in timeline
    assert "not measured" not in timeline  # the bytecode record, with its curve, was chosen
    assert "mlp, kill=tvm" in svg_text(tmp_path / "vm_run_time.svg")


def test_figures_without_records_are_skipped_with_notes(tmp_path):
    output = plot_results([suites_run(pass_records(families=("chain",)))], tmp_path)
    assert [p.name for p in output.paths] == ["pass_time_scaling.png", "pass_time_scaling.svg"]
    assert output.notes == (
        "skipped VM peak memory: no vm_peak_bytes records with params workload, kill and exec_mode",
        "skipped memory timeline: no vm_peak_bytes records with static_live_bytes/measured_bytes"
        " in extra",
        "skipped VM run time by exec mode: no vm_run_time records with params workload and"
        " exec_mode",
        "skipped history: history needs two or more results files",
    )


def test_history_of_several_runs(tmp_path):
    runs = [
        suites_run(
            pass_records(1.0 + i / 10, ("chain",)), started=f"2025-01-0{i + 1}T00:00:00+00:00"
        )
        for i in range(3)
    ]
    output = plot_results(list(reversed(runs)), tmp_path)  # order of the arguments does not matter
    assert tmp_path / "history_pass_pass_time.png" in output.paths
    assert tmp_path / "history_pass_pass_time.svg" in output.paths


def test_plot_needs_results(tmp_path):
    with pytest.raises(BenchkillError):
        plot_results([], tmp_path)
