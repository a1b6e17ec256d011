"""What `benchkill run` prints at the end: the file, the headline, failures, next steps."""

from benchkill.bench.model import EXPECTED_FAILURE
from benchkill.cli.cmd_run import run_summary
from benchkill.results.store import CaseRun, save
from tests.conftest import MiB, make_record, make_results, vm_records, write_results


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
    save(make_results(vm_records(("mlp",)), suites=("vm",)), previous)
    write_results(tmp_path / "20250101T060000Z-abc1234.json")  # a later run, suite pass only
    (tmp_path / "20250101T120000Z-notresults.json").write_text("{}")  # not a results file
    path = tmp_path / "20250102T000000Z-abc1234.json"
    text = run_summary(results_with(vm_records(("mlp",)) + [expected]), path)
    lines = text.splitlines()
    assert lines[0] == f"wrote {path} (2 cases, 19 records; the cases took 1:45)"
    assert "VM peak memory, no kills / benchkill's kills:" in lines
    assert "  mlp: bytecode: 2.00x, compiled: 2.00x" in lines
    assert "failures: 0 unexpected, 1 expected (known TVM bugs, recorded as such)" in lines
    assert lines[lines.index("next:") + 2] == f"  benchkill report {path} --out report.md"
    assert lines[-1] == f"  benchkill compare {previous} {path}"


def test_quick_runs_do_not_judge_size_dependent_targets(tmp_path):
    def chain(kill, peak, metric="vm_peak_bytes"):
        params = {"workload": "chain-8x4MiB", "exec_mode": "bytecode", "memory_cfg": "pooled"}
        params["kill"] = kill
        return make_record([peak] * 3, metric, "bytes", suite="vm", name="chain", params=params)

    records = [chain(None, 30 * MiB), chain("benchkill", 10 * MiB)]
    records.append(chain("benchkill", 10 * MiB, "liveness_bound_bytes"))
    quick = run_summary(results_with(records), tmp_path / "q.json")
    # judged: the bound; not: no kills / kills (set for the full size) and the pass
    # suite's scaling exponent (no pass records); pass rows exist only for measured sizes
    assert "targets: 1 met, 0 not met, 2 not measured or not judged" in quick
    full = results_with(records)
    full = type(full)(
        full.machine, type(full.settings)(("vm",), False, (), "x"), full.cases, full.records
    )
    assert "targets: 1 met, 1 not met" in run_summary(full, tmp_path / "f.json")


def test_summary_without_an_earlier_run_suggests_no_unrelated_compare(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no results/baseline-*/ here
    text = run_summary(results_with([]), tmp_path / "only.json")
    assert "benchkill compare" not in text
    assert "failures: 0 unexpected, 0 expected" in text


def test_the_baselines_suggested_are_those_of_this_cpu_when_there_are_some(tmp_path, monkeypatch):
    """The newest file of each baseline directory that ran a suite of this run's."""
    monkeypatch.chdir(tmp_path)
    folders = {"intel": "Intel(R) Xeon(R)", "amd": "AMD EPYC 7763"}
    for folder, cpu in folders.items():
        (tmp_path / "results" / f"baseline-{folder}").mkdir(parents=True)
        for name, suites in (("0.json", ("vm",)), ("a.json", ("vm",)), ("b.json", ("pass",))):
            save(
                make_results([], suites=suites, cpu_model=cpu),
                tmp_path / "results" / f"baseline-{folder}" / name,
            )
    new = tmp_path / "results" / "vm" / "b.json"
    new.parent.mkdir()

    def suggested(cpu):
        run = make_results([], suites=("vm",), cpu_model=cpu)
        return [
            line.split()[2] for line in run_summary(run, new).splitlines() if " compare " in line
        ]

    assert suggested("AMD EPYC 7763") == ["results/baseline-amd/a.json"]
    assert suggested("Intel(R) Xeon(R)") == ["results/baseline-intel/a.json"]
    # a CPU no baseline has: all of them (compare then warns of the other machine)
    assert suggested("Arm Neoverse") == [
        "results/baseline-amd/a.json",
        "results/baseline-intel/a.json",
    ]
