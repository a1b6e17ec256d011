"""The Markdown report: the headline first, then comparisons with warnings, figures, and
the detailed tables folded."""

import re
from dataclasses import replace

from benchkill.bench.model import FAILED
from benchkill.reporting.markdown import write_report
from tests.conftest import make_record, pass_records, suites_run, vm_records


def speedups(family="chain"):
    return [
        make_record(
            (3.9, 4.0, 4.1),
            "speedup_vs_tvm",
            "ratio",
            name=family,
            params={"family": family, "bindings": n, "impl": "benchkill"},
        )
        for n in (100, 1000)
    ]


def runs_of_two_suites():
    failed = make_record(
        (),
        "case",
        "",
        suite="vm",
        name="big",
        params={"workload": "big"},
        status=FAILED,
        error="Timeout: 600 s",
    )
    base = suites_run(
        pass_records(1.0, ("chain",)) + speedups() + vm_records(("mlp",)),
        "2025-01-01T00:00:00+00:00",
    )
    new = suites_run(
        pass_records(1.5, ("chain",)) + speedups() + vm_records(("mlp",)),
        "2025-01-02T00:00:00+00:00",
        commit="def5678",
    )
    later_vm = suites_run(
        vm_records(("mlp",), peak_scale=2) + [failed], "2025-01-03T00:00:00+00:00", "fff0000"
    )
    return base, new, later_vm


def test_report_leads_with_the_headline_then_comparisons_figures_and_details(tmp_path):
    base, new, later_vm = runs_of_two_suites()
    out = tmp_path / "out" / "report.md"
    paths = [tmp_path / "new.json", tmp_path / "later.json", tmp_path / "base.json"]
    assert write_report(list(zip(paths, [new, later_vm, base], strict=True)), out) == out
    text = out.read_text()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == [
        "## Headline",
        "## Compared with the previous run",
        "## Figures",
        "## Details",
    ]
    assert "the newest, `later.json`, is a quick run of suite(s) pass, vm at commit fff0000" in text
    # headline: speedup per family and size, memory saved per workload (newest vm run)
    assert "| family | 100 | 1,000 |" in text and "| chain | 4.00x | 4.00x |" in text
    assert "From `new.json`, a quick run." in text
    assert "| mlp | bytecode | 40 MiB | 20 MiB | 20 MiB | 16 MiB | 20 MiB (2.00x) |" in text
    # comparisons: per suite, the newest run against the one before it
    assert "### Suite pass: `base.json` -> `new.json`" in text
    assert "### Suite vm: `new.json` -> `later.json`" in text
    assert "**regression**" in text  # deterministic peak memory doubled
    assert "<summary>All 8 comparisons</summary>" in text  # 6 times, 2 speedups
    # details folded: runs, records, failures
    assert "<summary>Runs (3 files) and their machines</summary>" in text
    assert "| base.json | box | abc1234 |" in text
    assert "<summary>Failures and expected failures of suite vm (1)</summary>" in text
    assert "Timeout: 600 s" in text
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert "report_figures/pass_time_scaling.png" in images
    assert "report_figures/history_pass_pass_time.png" in images
    for image in images:
        assert (out.parent / image).exists()


def test_report_warns_when_runs_do_not_compare(tmp_path):
    base = suites_run(pass_records(1.0, ("chain",)), "2025-01-01T00:00:00+00:00")
    full = replace(base.settings, quick=False, started_at="2025-01-02T00:00:00+00:00")
    other = replace(base.machine, name="laptop", cores=8)
    new = replace(base, settings=full, machine=other)
    out = tmp_path / "report.md"
    write_report([(tmp_path / "a.json", base), (tmp_path / "b.json", new)], out)
    warnings = [line for line in out.read_text().splitlines() if line.startswith("> **Warning")]
    assert warnings == [
        "> **Warning:** different machines (name 'box' -> 'laptop', cores 2 -> 8): their "
        "times and peaks do not compare.",
        "> **Warning:** a quick run (base) against a full run (new): sizes and repeats differ; "
        "the cases only one ran are listed as missing.",
        # not "noise of the machine": the machines differ
        "> **Warning:** both runs measured the same code (commit abc1234): a regression or "
        "improvement below comes from what the warnings above say changed, or is noise.",
    ]


def test_report_of_one_run_says_there_is_nothing_to_compare(tmp_path):
    out = tmp_path / "report.md"
    write_report([(tmp_path / "only.json", suites_run(vm_records(("mlp",))))], out)
    text = out.read_text()
    assert "Suite vm: one run only (`only.json`)" in text
    assert "### Pass time" not in text and "### VM memory: what kills save" in text


def test_the_runs_list_names_each_runs_python_and_its_build(tmp_path):
    base = suites_run(pass_records(1.0, ("chain",)), "2025-01-01T00:00:00+00:00")
    pyenv = replace(base.machine, python="CPython 3.11.7", python_build="/opt/py (main, GCC)")
    older = replace(base.machine, python="CPython 3.11.7", python_build=None)  # an old file
    out = tmp_path / "report.md"
    runs = [(tmp_path / "a.json", replace(base, machine=pyenv))]
    runs.append((tmp_path / "b.json", replace(base, machine=older)))
    write_report(runs, out)
    listed = [line for line in out.read_text().splitlines() if line.startswith("- `")]
    assert ", CPython 3.11.7 at /opt/py (main, GCC), apache-tvm " in listed[0]
    assert ", CPython 3.11.7, apache-tvm " in listed[1]
