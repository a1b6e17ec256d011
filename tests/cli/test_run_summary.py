"""What `benchkill run` prints at the end: the file, the headline, failures, next steps."""

from benchkill.bench.model import EXPECTED_FAILURE
from benchkill.cli.cmd_run import run_summary
from benchkill.results.store import CaseRun
from tests.conftest import make_record, make_results, vm_records


def results_with(records):
    cases = (CaseRun("vm:mlp[]", "vm", "mlp", {}, 65.0), CaseRun("vm:x[]", "vm", "x", {}, 40.0))
    return make_results(records, suites=("vm",), cases=cases)


def test_summary_gives_headline_failures_and_next_commands(tmp_path):
    expected = make_record(
        (),
        "vm_build_time",
        "s",
        suite="vm",
        name="rekill",
        status=EXPECTED_FAILURE,
        params={"workload": "rekill", "exec_mode": "compiled", "kill": "legacy"},
    )
    previous = tmp_path / "20250101T000000Z-abc1234.json"
    previous.write_text("{}")
    path = tmp_path / "20250102T000000Z-abc1234.json"
    text = run_summary(results_with(vm_records(("mlp",)) + [expected]), path)
    lines = text.splitlines()
    assert lines[0] == f"wrote {path} (2 cases, 19 records; the cases took 1:45)"
    assert "VM peak memory, no kills / benchkill's kills:" in lines
    assert "  mlp: bytecode: 2.00x, compiled: 2.00x" in lines
    assert "failures: 0 unexpected, 1 expected (known TVM bugs, recorded as such)" in lines
    assert lines[lines.index("next:") + 1].startswith(f"  benchkill report {path} --out report.md")
    assert any(line.startswith(f"  benchkill compare {previous} {path}") for line in lines)


def test_summary_without_an_earlier_run_suggests_no_unrelated_compare(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no results/baseline-*/ here
    text = run_summary(results_with([]), tmp_path / "only.json")
    assert "benchkill compare" not in text
    assert "failures: 0 unexpected, 0 expected" in text
