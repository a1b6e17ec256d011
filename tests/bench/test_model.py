"""The record model: the one measurement label, case keys, units."""

from benchkill.bench.model import CaseSpec, canonical_unit, label, params_text


def test_label_names_suite_case_params_and_metric():
    params = {"impl": "tvm", "bindings": 3000}
    assert (
        label("pass", "chain", params, "pass_time")
        == "pass:chain[bindings=3000,impl=tvm] pass_time"
    )
    assert label("pass", "chain", params) == "pass:chain[bindings=3000,impl=tvm]"
    assert label("asv", "bench.Time.time_x", {}) == "asv:bench.Time.time_x[]"


def test_case_key_is_the_label_without_metric():
    spec = CaseSpec("vm", "mlp", {"exec_mode": "bytecode", "workload": "mlp"})
    assert spec.key == label("vm", "mlp", spec.params) == "vm:mlp[exec_mode=bytecode,workload=mlp]"


def test_params_text_and_units():
    assert params_text({"b": 2, "a": 1}, ", ") == "a=1, b=2"
    assert params_text({}) == ""
    assert [canonical_unit(u) for u in ("s", "sec", "B", "ratio")] == [
        "seconds",
        "seconds",
        "bytes",
        "ratio",
    ]


def test_one_record_type_for_suites_and_results_files():
    from dataclasses import fields

    from benchkill.bench.model import Record
    from benchkill.results.store import ResultRecord

    assert ResultRecord is Record
    measured = Record("pass", "chain", {"bindings": 10}, "pass_time", "seconds", (3, 1, 2))
    assert (measured.case, measured.summary) == ("", None)
    stored = measured.stored("pass:chain[bindings=10]", ("abc1234", False))
    assert stored.case == "pass:chain[bindings=10]" and stored.samples == (3.0, 1.0, 2.0)
    assert (stored.summary.min, stored.summary.median) == (1.0, 2.0)
    assert (stored.git_commit, stored.git_dirty) == ("abc1234", False)
    # the stored JSON keeps its order: the case first, the git state last
    assert [f.name for f in fields(Record)] == [
        "case", "suite", "name", "params", "metric", "unit", "samples", "summary",
        "status", "error", "extra", "git_commit", "git_dirty",
    ]  # fmt: skip
