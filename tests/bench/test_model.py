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
