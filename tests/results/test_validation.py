"""Loading rejects what no run can produce; writing keeps modes and never replaces a file
it must create; schema version 1 still loads."""

import json
import os
import stat
from dataclasses import replace

import pytest

from benchkill.errors import BenchkillError
from benchkill.results import atomic
from benchkill.results.store import (
    SCHEMA_VERSION,
    load,
    save,
    to_dict,
    write_atomic,
)
from benchkill.results.validation import check_record
from tests.conftest import BASE10, make_record, make_results


def _saved(tmp_path, records, **machine):
    path = tmp_path / "r.json"
    save(make_results(records, **machine), path)
    return path


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _first(d):
    return d["records"][0]


IMPOSSIBLE = [
    ("negative time", lambda d: _first(d).update(samples=[-1.0] * 10), "negative sample -1.0"),
    ("negative bytes", lambda d: _first(d).update(unit="bytes", samples=[-5.0] * 10), "negative"),
    ("zero times", lambda d: _first(d).update(samples=[0.0] * 10), "every sample is 0"),
    ("summary 1000x", lambda d: _first(d)["summary"].update(median=1005.0), "summary.median"),
    ("summary min", lambda d: _first(d)["summary"].update(min=0.5), "summary.min"),
    ("summary n", lambda d: _first(d)["summary"].update(n=3), "summary.n is 3"),
    ("summary, no samples", lambda d: _first(d).update(samples=[]), "a summary without samples"),
    ("bindings text", lambda d: _first(d)["params"].update(bindings="lots"), "params.bindings"),
    ("bindings 0", lambda d: _first(d)["params"].update(bindings=0), "params.bindings"),
    ("bindings bool", lambda d: _first(d)["params"].update(bindings=True), "params.bindings"),
    ("kill number", lambda d: _first(d)["params"].update(kill=3), "params.kill"),
    ("extra timeline", lambda d: _first(d)["extra"].update(static_live_bytes="x"), "extra.static"),
    ("extra curve", lambda d: _first(d)["extra"].update(measured_bytes=[1, -2]), "measured_bytes"),
    ("extra better", lambda d: _first(d)["extra"].update(better="up"), "extra.better"),
    ("extra bindings", lambda d: _first(d)["extra"].update(bindings_actual=[1]), "bindings_actual"),
    ("duplicate", lambda d: d["records"].append(_first(d)), "the same measurement as records[0]"),
    ("start time", lambda d: d["settings"].update(started_at="soon"), "settings.started_at"),
    ("cores", lambda d: d["machine"].update(cores=0), "machine.cores"),
    ("commit type", lambda d: _first(d).update(git_commit=7), "records[0].git_commit"),
    ("dirty type", lambda d: _first(d).update(git_dirty="no"), "records[0].git_dirty"),
]


@pytest.mark.parametrize("what,change,fragment", IMPOSSIBLE, ids=[i[0] for i in IMPOSSIBLE])
def test_impossible_values_are_one_line_errors_naming_the_record(tmp_path, what, change, fragment):
    path = _saved(tmp_path, [make_record()])
    _edit(path, change)
    with pytest.raises(BenchkillError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert fragment in message, message
    if what not in ("start time", "cores", "commit type", "dirty type"):  # (schema errors)
        assert "records[" in message and "pass:chain[" in message and "] pass_time" in message


def test_duplicate_cases_are_rejected(tmp_path):
    from benchkill.bench.model import CaseSpec

    spec = CaseSpec("pass", "chain", {"bindings": 100})
    results = make_results().with_case(spec, 1.0, [make_record()])
    path = tmp_path / "r.json"
    save(results, path)
    _edit(path, lambda d: d["cases"].append(d["cases"][0]))
    with pytest.raises(
        BenchkillError, match=r"cases\[1\]: case pass:chain\[bindings=100\] is listed twice"
    ):
        load(path)


def test_values_a_run_does_produce_are_accepted():
    # zero bytes (nothing allocated), a single zero time among others, ratios, no samples
    check_record(make_record([0.0, 0.0], "vm_peak_bytes", "bytes"), "r")
    check_record(make_record([0.0, 1e-9, 2e-9]), "r")
    check_record(make_record([0.25], "speedup_vs_tvm", "ratio"), "r")
    check_record(make_record([-3.0], "delta", "unit"), "r")  # no sign known for "unit"
    check_record(make_record((), "case", "", status="failed", error="x"), "r")
    odd = make_record([1.0], params={"bindings": 10, "kill": None, "colour": [1, "x"]})
    check_record(replace(odd, extra={"anything": {"goes": None}}), "r")


def test_version_1_files_still_load_and_their_records_have_no_commit(tmp_path):
    path = tmp_path / "v1.json"
    data = to_dict(make_results([make_record()], git_commit="abc1234"))
    data["schema_version"] = 1
    del data["records"][0]["git_commit"], data["records"][0]["git_dirty"]
    path.write_text(json.dumps(data))
    results = load(path)
    assert results.records[0].git_commit is None
    assert results.code_states == (("abc1234", None),)  # counted as the machine's


def test_version_2_records_carry_their_own_commit(tmp_path):
    a = replace(make_record(), git_commit="aaaaaaa", git_dirty=False)
    b = replace(make_record(name="tree"), git_commit="bbbbbbb", git_dirty=True)
    path = _saved(tmp_path, [a, b], git_commit="aaaaaaa")
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION == 2
    assert [r["git_commit"] for r in data["records"]] == ["aaaaaaa", "bbbbbbb"]
    assert load(path).code_states == (("aaaaaaa", False), ("bbbbbbb", True))


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_get_the_users_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        path = _saved(tmp_path, [make_record()])
        write_atomic(tmp_path / "report.md", "# report\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "report.md").stat().st_mode) == mode


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = _saved(tmp_path, [make_record()])
    path.chmod(0o640)
    save(make_results([make_record(BASE10[:5])]), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert len(load(path).records[0].samples) == 5


def test_exclusive_save_never_replaces_a_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "r.json"
    save(make_results([make_record()]), path, exclusive=True)
    before = path.read_bytes()
    with pytest.raises(BenchkillError, match="already exists"):
        save(make_results([]), path, exclusive=True)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


def test_exclusive_save_without_hard_links(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "link", no_links)
    path = tmp_path / "r.json"
    save(make_results([make_record()]), path, exclusive=True)
    assert load(path).records == (make_record(),)
    with pytest.raises(BenchkillError, match="already exists"):
        save(make_results([]), path, exclusive=True)
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


def test_stale_temporary_files_of_a_path_are_removed(tmp_path):
    path = _saved(tmp_path, [make_record()])
    (tmp_path / ".r.json.abc123.tmp").write_text("half")
    (tmp_path / ".other.json.abc.tmp").write_text("not ours")
    atomic.remove_stale_temps(path)
    assert sorted(os.listdir(tmp_path)) == [".other.json.abc.tmp", "r.json"]


def test_a_run_never_writes_a_file_loading_would_reject(tmp_path):
    from benchkill.bench.model import CaseSpec, Record
    from benchkill.results.recorder import ResultsFile

    path = tmp_path / "r.json"
    sink = ResultsFile(make_results(suites=("fake",)), path, code=("abc1234", False), create=True)
    sink.start()
    spec = [CaseSpec("fake", "case", {"i": i}) for i in range(3)]

    def rec(i, metric, samples, unit="seconds"):
        return Record("fake", "case", {"i": i}, metric, unit, tuple(samples))

    sink.add(spec[0], 1.0, [rec(0, "t", [1.0, 2.0]), rec(0, "neg", [-1.0])])
    sink.add(spec[1], 1.0, [rec(1, "t", [1.0]), rec(1, "t", [2.0])])  # a measurement twice
    sink.add(spec[2], 1.0, [rec(2, "zero", [0.0, 0.0])])
    results = load(path)
    by = {(r.case, r.metric): r for r in results.records}
    assert by[("fake:case[i=0]", "t")].status == "ok"
    assert by[("fake:case[i=0]", "neg")].status == "failed"
    assert by[("fake:case[i=0]", "neg")].error == (
        "ValueError: negative sample -1.0 (seconds cannot be negative)"
    )
    assert (
        by[("fake:case[i=1]", "case")].error
        == "ValueError: the case returned measurement 't' twice"
    )
    assert by[("fake:case[i=2]", "zero")].error.startswith("ValueError: every sample is 0")
    assert {r.git_commit for r in results.records} == {"abc1234"}
    with pytest.raises(BenchkillError, match="already exists"):
        ResultsFile(make_results(), path, create=True).start()
