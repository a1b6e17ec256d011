"""Figures, from records shaped as the suites write them: what each figure draws.

Each test checks a figure's data (the series drawn, their order, colours and styles, and
the texts explaining absent data) through the FigureData the figure returns, and that
its PNG is 1000 pixels wide.
"""

import struct

import pytest

from benchkill.bench.model import EXPECTED_FAILURE
from benchkill.errors import BenchkillError
from benchkill.reporting import palette
from benchkill.reporting.plot import plot_results
from benchkill.reporting.plot_base import line_widths
from benchkill.reporting.plot_timeline import HOLDERS_KEY
from tests.conftest import MiB, make_record, pass_records, suites_run, vm_records

BLUE, ORANGE, GREY = (palette.COLOURS[k] for k in ("benchkill", "tvm", "none"))


def png_width(path):
    """The width in pixels of a PNG file (from its IHDR chunk)."""
    return struct.unpack(">I", path.read_bytes()[16:20])[0]


def draw(tmp_path, *runs):
    output = plot_results(list(runs), tmp_path)
    for figure in output.figures:
        png = [p for p in figure.paths if p.suffix == ".png"]
        assert len(png) == 1 and png_width(png[0]) == 1000, figure.stem
    return output


def test_pass_time_scaling_draws_one_panel_per_family_and_a_line_per_impl(tmp_path):
    tvm = [
        make_record([2e-6 * n] * 3, name=f, params={"family": f, "bindings": n, "impl": "tvm"})
        for f in ("diamond", "chain")
        for n in (100, 1000, 10000)
    ]
    figure = draw(tmp_path, suites_run(tvm + pass_records())).figure("pass_time_scaling")
    assert figure.panels == ("chain", "diamond")  # the suite's family order, others after
    chain = figure.in_panel("chain")
    assert [s.label for s in chain] == ["benchkill", "TVM C++", "naive port"]
    assert [s.colour for s in chain] == [BLUE, ORANGE, palette.COLOURS["naive"]]
    assert chain[0].x == (100.0, 1000.0, 10000.0)
    assert chain[0].y == pytest.approx((1e-4, 1e-3, 1e-2))
    assert chain[0].low == pytest.approx([v * 0.995 for v in chain[0].y])  # the IQR


def test_pass_speedup_is_tvm_over_benchkill_per_family_and_size(tmp_path):
    def speedup(family, n, ratios):
        params = {"family": family, "bindings": n, "impl": "benchkill"}
        return make_record(ratios, "speedup_vs_tvm", "ratio", name=family, params=params)

    records = [speedup("mixed", 1000, (0.8, 0.9, 1.0)), speedup("chain", 3000, (3.0, 4.0, 5.0))]
    records.append(speedup("chain", 1000, (2.0, 2.5, 3.0)))
    figure = draw(tmp_path, suites_run(records)).figure("pass_speedup")
    assert figure.panels == ("chain", "mixed")
    (chain,) = figure.in_panel("chain")
    assert chain.x == ("1k", "3k") and chain.y == (2.5, 4.0) and chain.colour == BLUE
    assert (chain.low, chain.high) == ((2.25, 3.5), (2.75, 4.5))
    # without interleaved ratios: TVM's median / benchkill's
    times = [
        make_record([t] * 3, name="chain", params={"family": "chain", "bindings": 1000, "impl": i})
        for i, t in (("benchkill", 1.0), ("tvm", 3.0))
    ]
    (fallback,) = draw(tmp_path, suites_run(times)).figure("pass_speedup").series
    assert fallback.y == (3.0,)


def vm_run_with_failures():
    """vm records of mlp and conv, plus a workload whose peaks are below 1 MiB and an
    expected failure (the legacy build in compiled mode)."""
    tiny = {"workload": "rekill", "memory_cfg": "pooled"}
    records = vm_records(("mlp", "conv"))
    for kill, mode in ((None, "bytecode"), ("benchkill", "compiled")):
        params = {**tiny, "exec_mode": mode, "kill": kill}
        records.append(
            make_record(
                [40960.0] * 3, "vm_peak_bytes", "bytes", suite="vm", name="rekill", params=params
            )
        )
        records.append(
            make_record(
                [5e-6, 6e-6, 7e-6], "vm_run_time", "s", suite="vm", name="rekill", params=params
            )
        )
    legacy = {**tiny, "exec_mode": "compiled", "kill": "legacy"}
    records.append(
        make_record((), "vm_build_time", "s", suite="vm", name="rekill", params=legacy,
                    status=EXPECTED_FAILURE, error="InternalError: Check failed")
    )  # fmt: skip
    return suites_run(records)


def test_vm_peak_memory_has_a_panel_per_workload_kills_in_order(tmp_path):
    figure = draw(tmp_path, vm_run_with_failures()).figure("vm_peak_memory")
    assert figure.panels == ("mlp", "conv", "rekill")  # the order the suite ran them
    bars = figure.in_panel("mlp", "bar")
    assert [(s.x[0], s.label) for s in bars] == [
        ("bytecode", "no kills"),
        ("bytecode", "TVM's kills"),
        ("bytecode", "benchkill"),
        ("compiled", "no kills"),
        ("compiled", "TVM's kills"),
        ("compiled", "benchkill"),
    ]
    assert [s.colour for s in bars] == [GREY, ORANGE, BLUE] * 2
    assert [s.style for s in bars] == [""] * 3 + ["//"] * 3  # exec mode as hatch
    assert [s.y[0] for s in bars] == [20, 10, 10] * 2  # MiB, written on the bars
    bounds = figure.in_panel("mlp", "bound")
    assert [s.y[0] for s in bounds] == pytest.approx([16, 8, 8] * 2)
    # the workload below the resolution is explained, not an empty group
    assert figure.in_panel("rekill") == []
    (text,) = figure.texts
    assert text.startswith("rekill: every peak is below 1 MiB (at most 40 KiB)")
    assert "legacy: expected failure (compiled)" in text


def test_vm_run_time_bars_have_iqr_a_unit_per_panel_and_failures_in_place(tmp_path):
    figure = draw(tmp_path, vm_run_with_failures()).figure("vm_run_time")
    mlp = figure.in_panel("mlp")
    assert [s.colour for s in mlp] == [GREY, ORANGE, BLUE] * 2
    assert mlp[0].y == pytest.approx((1.1,)) and mlp[0].low == pytest.approx((1.05,))  # ms
    assert mlp[0].high == pytest.approx((1.15,))
    rekill = figure.in_panel("rekill")
    assert [(s.kind, s.label, s.x[0]) for s in rekill] == [
        ("bar", "no kills", "bytecode"),
        ("bar", "benchkill", "compiled"),
        ("note", "legacy: expected failure", "compiled"),
    ]
    assert rekill[0].y == pytest.approx((6.0,))  # microseconds in this panel


def test_memory_timeline_shows_identical_lines_and_says_what_is_not_recorded(tmp_path):
    output = draw(tmp_path, suites_run(vm_records(("mlp",)), "2025-01-02T00:00:00+00:00"))
    figure = output.figure("memory_timeline_mlp")
    assert figure.panels == (
        "static live bytes (liveness model), per binding",
        "measured resident memory above its lowest, bytecode, per VM call",
    )
    static = figure.in_panel(figure.panels[0])
    # the three curves are identical: each keeps its colour, the legend says so
    assert [s.label for s in static] == [
        "no kills, peak 3 MiB",
        "TVM's kills (= no kills), peak 3 MiB",
        "benchkill (= no kills), peak 3 MiB",
    ]
    assert [s.colour for s in static] == [GREY, ORANGE, BLUE]
    assert static[0].y == (1, 3, 2)
    measured = figure.in_panel(figure.panels[1])
    assert measured[0].y == (0, 1, 4, 2)  # MiB above the run's lowest
    assert any("not in these records" in t for t in figure.texts)
    # coinciding lines are drawn wider first, so each shows as a stripe
    assert line_widths(static) == pytest.approx([4.0, 2.6, 1.2])


def test_memory_timeline_labels_the_largest_holders_when_recorded(tmp_path):
    records = []
    for r in vm_records(("mlp",)):
        if r.metric == "vm_peak_bytes" and r.params["kill"] == "benchkill":
            holders = [{"var": f"lv{i}", "bytes": (i + 1) * MiB} for i in range(5)]
            r = type(r)(**{**r.__dict__, "extra": {**r.extra, HOLDERS_KEY: holders}})
        records.append(r)
    figure = draw(tmp_path, suites_run(records)).figure("memory_timeline_mlp")
    assert not any("not in these records" in t for t in figure.texts)
    # the three largest of benchkill's live set at its peak, largest first
    box = " ".join(figure.labels[-1].split())  # wrapped to the panel's width
    assert box == "live at the peak, benchkill: lv4 5 MiB, lv3 4 MiB, lv2 3 MiB, and 2 more"


def test_history_is_in_commit_order_with_short_labels(tmp_path):
    runs = [
        suites_run(
            pass_records(scale, ("chain",)) + vm_records(("mlp",), peak_scale=peak),
            f"2025-01-0{day}T00:00:00+00:00",
            commit,
        )
        for day, commit, scale, peak in (
            (1, "abc1234", 1.0, 1),
            (2, "def5678", 2.0, 1),
            (3, "def5678", 1.5, 2),
        )
    ]
    output = draw(tmp_path, *reversed(runs))  # the order of the arguments does not matter
    times = output.figure("history_pass_pass_time")
    assert times.xlabels == ("abc1234 q", "def5678 q", "def5678 #2 q")
    (benchkill, naive) = times.in_panel("chain")
    assert (benchkill.label, benchkill.colour) == ("benchkill", BLUE)
    assert benchkill.x == (0, 1, 2) and benchkill.y == pytest.approx((1.0, 2.0, 1.5))
    peaks = output.figure("history_vm_vm_peak_bytes")  # bytes: the values in MiB
    lines = peaks.in_panel("mlp")
    assert [s.label for s in lines][:3] == [
        "no kills, bytecode",
        "TVM's kills, bytecode",
        "benchkill, bytecode",
    ]
    assert [s.style for s in lines] == ["-"] * 3 + ["--"] * 3  # exec mode as line style
    assert lines[0].y == pytest.approx((20, 20, 40))
    with pytest.raises(KeyError):
        output.figure("history_vm_liveness_bound_bytes")  # secondary metrics get none


def test_history_tells_apart_the_lines_of_a_benchmark_by_their_parameters(tmp_path):
    """Records with no implementation or kill variant (an asv or pytest-benchmark benchmark
    over sizes): each line of a panel gets a (colour, style) of its own, in turn."""
    name = "tests/benchmarks/test_bench_pass.py::test_pass_beside_tvm"
    cases = [{"family": f, "bindings": b} for f in ("chain", "mixed") for b in (3000, 30000)]
    runs = [
        suites_run(
            [
                make_record(
                    [scale * (i + 1)] * 3,
                    "time_over_floor",
                    "ratio",
                    suite="pytest-benchmark",
                    name=name,
                    params=p,
                )
                for i, p in enumerate(cases)
            ],
            f"2025-01-0{day}T00:00:00+00:00",
            commit,
        )
        for day, commit, scale in ((1, "abc1234", 1.0), (2, "def5678", 1.2))
    ]
    lines = draw(tmp_path, *runs).figure("history_pytest-benchmark_time_over_floor").in_panel(name)
    assert len(lines) == 4
    assert [(s.colour, s.style) for s in lines] == list(palette.OTHER_LINES[:4])
    assert len({s.label for s in lines}) == 4


def test_figures_without_records_are_skipped_with_notes(tmp_path):
    output = plot_results([suites_run(pass_records(families=("chain",)))], tmp_path)
    assert [p.name for p in output.paths] == ["pass_time_scaling.png", "pass_time_scaling.svg"]
    assert output.notes == (
        "skipped pass speedup: no speedup_vs_tvm records and no pass_time of both benchkill"
        " and tvm",
        "skipped VM peak memory: no vm_peak_bytes records with params workload, kill and exec_mode",
        "skipped memory timeline: no vm_peak_bytes records with static_live_bytes/measured_bytes"
        " in extra",
        "skipped VM run time: no vm_run_time records with params workload, kill and exec_mode",
        "skipped history: history needs two or more results files",
    )


def test_plot_needs_results(tmp_path):
    with pytest.raises(BenchkillError):
        plot_results([], tmp_path)
