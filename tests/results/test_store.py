"""Results files: round trip, atomic writes, and a clear error for every broken file."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchkill.bench.model import FAILED, CaseSpec, Record
from benchkill.errors import BenchkillError
from benchkill.results import store as res
from benchkill.results.loading import load_any
from benchkill.results.store import (
    SCHEMA_VERSION,
    ResultRecord,
    Results,
    load,
    save,
    write_atomic,
)
from tests.conftest import make_record, make_results


def results_of(n_cases: int = 2) -> Results:
    """A run of ``n_cases`` finished pass cases and one crashed case."""
    out = make_results(
        hostname="box.example",
        cores=2,
        git_commit="abc1234",
        python_build="/usr, main, GCC",
        malloc="libjemalloc.so.2",
    )
    for i in range(n_cases):
        spec = CaseSpec("pass", "chain", {"bindings": 10 * (i + 1)})
        rec = Record(
            "pass",
            "chain",
            dict(spec.params, impl="benchkill"),
            "pass_time",
            "seconds",
            samples=(0.1 + i, 0.2 + i, 0.3 + i),
            extra={"timeline": [1, 2, 3]},
        )
        out = out.with_case(spec, 1.5, [ResultRecord.from_record(rec, spec.key)])
    failed = make_record((), "case", "", name="x", params={}, status=FAILED, error="boom")
    return replace(out, records=out.records + (failed,))


def test_round_trip(tmp_path):
    original = results_of()
    path = tmp_path / "r.json"
    save(original, path)
    loaded = load(path)
    assert loaded == original
    assert loaded.records[0].summary.median == pytest.approx(0.2)
    assert loaded.done == {"pass:chain[bindings=10]", "pass:chain[bindings=20]"}
    data = json.loads(path.read_text())
    assert next(iter(data)) == "schema_version"
    assert data["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    ("field", "kept"), [("python_build", "malloc"), ("malloc", "python_build")]
)
def test_a_file_without_a_later_machine_field_loads_with_it_unknown(tmp_path, field, kept):
    path = tmp_path / "r.json"
    save(results_of(), path)
    data = json.loads(path.read_text())
    written = dict(data["machine"])
    assert data["machine"].pop(field) is not None
    path.write_text(json.dumps(data))  # as files written before the field existed
    machine = load(path).machine
    assert getattr(machine, field) is None
    assert getattr(machine, kept) == written[kept]


def test_record_summary_is_computed_from_samples():
    rec = ResultRecord.from_record(Record("s", "n", {}, "m", "bytes", samples=(3, 1, 2)), "k")
    assert rec.samples == (3.0, 1.0, 2.0)
    assert (rec.summary.min, rec.summary.median, rec.summary.n) == (1.0, 2.0, 3)
    assert ResultRecord.from_record(Record("s", "n", {}, "m", "bytes"), "k").summary is None


def test_save_replaces_atomically_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "sub" / "r.json"
    save(results_of(1), path)
    save(results_of(2), path)
    assert len(load(path).cases) == 2
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    save(results_of(1), path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(res.os, "replace", broken_replace)
    with pytest.raises(BenchkillError, match="No space left"):
        save(results_of(2), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_unserialisable_results_keep_the_old_file(tmp_path):
    path = tmp_path / "r.json"
    save(results_of(1), path)
    before = path.read_bytes()
    bad = results_of(1)
    rec = ResultRecord("k", "s", "n", {"p": object()}, "m", "seconds")
    with pytest.raises(BenchkillError, match="not JSON-serialisable"):
        save(Results(bad.machine, bad.settings, bad.cases, (rec,)), path)
    assert path.read_bytes() == before


def test_write_atomic_creates_parents(tmp_path):
    write_atomic(tmp_path / "a" / "b" / "c.txt", "hello")
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "hello"


def _broken_files():
    """(description, file content, expected message fragment)."""
    text = json.dumps(res.to_dict(results_of()), indent=1)

    def edited(change):
        data = json.loads(text)
        change(data)
        return json.dumps(data)

    return [
        ("missing", None, "no such file"),
        ("directory", "DIR", "is a directory"),
        ("empty", "", "empty file"),
        ("truncated", text[: len(text) // 2], "truncated"),
        ("garbage", "{not json", "invalid JSON at line 1"),
        ("binary", b"\xff\xfe\x00", "invalid UTF-8"),
        ("list", "[1, 2]", "no schema_version"),
        ("newer", edited(lambda d: d.update(schema_version=SCHEMA_VERSION + 1)), "schema_version"),
        ("string version", edited(lambda d: d.update(schema_version="1")), "schema_version"),
        ("no machine", edited(lambda d: d.pop("machine")), "machine: missing"),
        (
            "machine name",
            edited(lambda d: d["machine"].update(name=3)),
            "machine.name: expected str",
        ),
        ("samples", edited(lambda d: d["records"][0].update(samples="1,2")), "records[0].samples"),
        ("sample", edited(lambda d: d["records"][1]["samples"].append("x")), "samples[3]"),
        ("nan", edited(lambda d: d["records"][0]["samples"].append(float("nan"))), "finite"),
        ("status", edited(lambda d: d["records"][0].update(status="great")), "status"),
        ("bool", edited(lambda d: d["settings"].update(quick="yes")), "settings.quick"),
        ("count", edited(lambda d: d["records"][0]["summary"].update(n=True)), "boolean"),
        ("cases", edited(lambda d: d.update(cases={})), "cases: expected list"),
    ]


@pytest.mark.parametrize(
    "what,content,fragment", [pytest.param(*t, id=t[0]) for t in _broken_files()]
)
def test_broken_file_gives_one_line_error_naming_file_and_problem(
    tmp_path, what, content, fragment
):
    path = tmp_path / "broken.json"
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(BenchkillError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message, what
    assert fragment in message, (what, message)
    assert "\n" not in message


REPOSITORY_RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.mark.parametrize(
    "path",
    sorted(REPOSITORY_RESULTS.glob("*/*.json"))
    + sorted(p for p in REPOSITORY_RESULTS.glob("*/asv/*/*.json") if p.name != "machine.json"),
    ids=lambda p: str(p.relative_to(REPOSITORY_RESULTS)),
)
def test_results_files_of_the_repository_still_load(path):
    results = load_any(path)
    assert results.records and all(r.suite for r in results.records)
