"""The Markdown report: runs, tables, failures, comparisons and embedded figures."""

import re
from dataclasses import replace

from benchkill.bench.model import FAILED
from benchkill.reporting.markdown import write_report
from tests.conftest import make_record, pass_records, suites_run, vm_records


def test_report_embeds_tables_comparison_and_figures(tmp_path):
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
        pass_records(1.0, ("chain",)) + vm_records(("mlp",)), "2025-01-01T00:00:00+00:00"
    )
    new = suites_run(
        pass_records(1.5, ("chain",)) + vm_records(("mlp",)), "2025-01-02T00:00:00+00:00"
    )
    new = replace(new, machine=replace(new.machine, git_commit="def5678"))
    later_vm = suites_run(
        vm_records(("mlp",), peak_scale=2) + [failed], "2025-01-03T00:00:00+00:00"
    )
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
