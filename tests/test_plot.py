"""Figures and the Markdown report, from records shaped as the suites write them."""

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import matplotlib
import pytest

from benchkill.bench.machine import Machine
from benchkill.bench.model import FAILED
from benchkill.errors import BenchkillError
from benchkill.reporting.markdown import write_report
from benchkill.reporting.plot import plot_results
from benchkill.results.store import ResultRecord, Results, RunSettings
from benchkill.stats import summarize

MiB = 2**20


def rec(suite, metric, unit, params, samples, extra=None, status="ok", error=None):
    samples = tuple(float(v) for v in samples)
    return ResultRecord(
        case=f"{suite}:{params}",
        suite=suite,
        name=params.get("family", params.get("workload", "x")),
        params=params,
        metric=metric,
        unit=unit,
        samples=samples,
        summary=summarize(samples) if samples else None,
        status=status,
        error=error,
        extra=extra or {},
    )


def pass_records(scale=1.0, families=("chain", "diamond")):
    out = []
    for family in families:
        for n in (100, 1000, 10000):
            for impl, t in (("benchkill", 1e-6 * n), ("naive", 1e-9 * n * n)):
                out.append(
                    rec(
                        "pass",
                        "pass_time",
                        "seconds",
                        {"family": family, "bindings": n, "impl": impl},
                        [t * scale * f for f in (0.99, 1.0, 1.01)],
                    )
                )
    return out


def vm_records(workloads=("mlp", "conv"), peak_scale=1):
    """Records as the vm suite writes them (params, units "s" and "bytes", timelines)."""
    out = []
    for workload in workloads:
        for kill in (None, "tvm", "benchkill"):
            for mode in ("bytecode", "compiled"):
                params = {
                    "workload": workload,
                    "exec_mode": mode,
                    "memory_cfg": "pooled",
                    "kill": kill,
                }
                peak = (20 if kill is None else 10) * MiB * peak_scale
                extra = {"static_live_bytes": [1 * MiB, 3 * MiB, 2 * MiB], "measured_bytes": []}
                if mode == "bytecode":
                    extra["measured_bytes"] = [300 * MiB, 301 * MiB, 304 * MiB, 302 * MiB]
                out.append(rec("vm", "vm_peak_bytes", "bytes", params, [peak] * 3, extra))
                out.append(rec("vm", "liveness_bound_bytes", "bytes", params, [peak * 0.8]))
                out.append(rec("vm", "vm_run_time", "s", params, [1e-3, 1.1e-3, 1.2e-3]))
    return out


def run_of(records, started="2025-01-01T00:00:00+00:00", commit="abc1234"):
    settings = RunSettings(("pass", "vm"), True, ("benchkill", "run"), started, started)
    return Results(Machine(name="box", git_commit=commit, cores=2), settings, (), tuple(records))


def svg_text(path):
    return " ".join(t.text or "" for t in ET.parse(path).iter() if t.tag.endswith("text"))


def test_all_figures_from_a_pass_run_and_a_later_vm_run(tmp_path):
    # each figure reads the newest run that has its records
    pass_run = run_of(pass_records(families=("chain",)), "2025-01-01T00:00:00+00:00")
    vm_run = run_of(vm_records(("mlp",)), "2025-01-02T00:00:00+00:00")
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
    output = plot_results([run_of(pass_records(families=("chain",)))], tmp_path)
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
        run_of(pass_records(1.0 + i / 10, ("chain",)), started=f"2025-01-0{i + 1}T00:00:00+00:00")
        for i in range(3)
    ]
    output = plot_results(list(reversed(runs)), tmp_path)  # order of the arguments does not matter
    assert tmp_path / "history_pass_pass_time.png" in output.paths
    assert tmp_path / "history_pass_pass_time.svg" in output.paths


def test_plot_needs_results(tmp_path):
    with pytest.raises(BenchkillError):
        plot_results([], tmp_path)


def test_report_embeds_tables_comparison_and_figures(tmp_path):
    failed = rec("vm", "case", "", {"workload": "big"}, [], status=FAILED, error="Timeout: 600 s")
    base = run_of(pass_records(1.0, ("chain",)) + vm_records(("mlp",)), "2025-01-01T00:00:00+00:00")
    new = run_of(pass_records(1.5, ("chain",)) + vm_records(("mlp",)), "2025-01-02T00:00:00+00:00")
    new = replace(new, machine=replace(new.machine, git_commit="def5678"))
    later_vm = run_of(vm_records(("mlp",), peak_scale=2) + [failed], "2025-01-03T00:00:00+00:00")
    out = tmp_path / "out" / "report.md"
    paths = [tmp_path / "new.json", tmp_path / "later.json", tmp_path / "base.json"]
    assert write_report(list(zip(paths, [new, later_vm, base], strict=True)), out) == out
    text = out.read_text()
    assert text.startswith("# benchkill report")
    assert "| base.json | box | abc1234 |" in text and "| new.json | box | def5678 |" in text
    # per suite: the newest run that has it, compared with the run before it
    assert "## Results of suite pass (new.json)" in text
    assert "## Results of suite vm (later.json)" in text
    assert "### pass: pass_time" in text and "### vm: vm_peak_bytes" in text
    assert "| chain | bindings=100, family=chain, impl=benchkill | 150 us |" in text
    assert "## Comparison of suite pass: base.json -> new.json" in text
    assert "## Comparison of suite vm: new.json -> later.json" in text
    assert "**regression**" in text  # deterministic peak memory doubled
    assert "3 vs 3 samples cannot reach p < 0.002" in text  # pass time: too few samples
    assert "Timeout: 600 s" in text
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert "report_figures/pass_time_scaling.png" in images
    assert "report_figures/history_pass_pass_time.png" in images
    for image in images:
        assert (out.parent / image).exists()
