"""cli/outputs.py: what a command may write over, and how it writes."""

import os
import stat
from pathlib import Path

import pytest

from benchkill.cli.outputs import (
    check_directory,
    check_new_file,
    is_results_file,
    refuse_overwrite,
    shown,
    staged_directory,
    write_text,
)
from benchkill.errors import BenchkillError
from tests.conftest import write_results


def test_results_files_are_recognised_even_when_cut_short(tmp_path):
    full = write_results(tmp_path / "r.json")
    cut = tmp_path / "cut.json"
    cut.write_bytes(full.read_bytes()[:40])
    asv = tmp_path / "asv.json"
    asv.write_text('{"commit_hash": "ab", "result_columns": ["result"], "results": {}}')
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    (tmp_path / "report.md").write_text("# report")
    assert is_results_file(full) and is_results_file(cut) and is_results_file(asv)
    assert not is_results_file(other) and not is_results_file(tmp_path / "report.md")
    assert not is_results_file(tmp_path) and not is_results_file(tmp_path / "missing")


def test_an_input_is_never_an_output_whatever_its_name(tmp_path, monkeypatch):
    source = tmp_path / "m.py"
    source.write_text("x")
    os.link(source, tmp_path / "hard.py")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    for alias in (source, tmp_path / "hard.py", "../m.py", tmp_path / "sub" / ".." / "m.py"):
        with pytest.raises(BenchkillError, match="is an input of this command"):
            refuse_overwrite(alias, [source])
    refuse_overwrite(tmp_path / "new.py", [source])  # a new file is fine
    (tmp_path / "notes.md").write_text("mine")  # any other file that exists: refused too
    with pytest.raises(BenchkillError, match="notes.md: already exists; choose another --out"):
        refuse_overwrite(tmp_path / "notes.md", [source])
    os.symlink(tmp_path / "gone", tmp_path / "dangling")  # and a dangling symlink
    with pytest.raises(BenchkillError, match="dangling: already exists"):
        refuse_overwrite(tmp_path / "dangling", [])
    assert (tmp_path / "notes.md").read_text() == "mine"


def test_results_files_and_directories_are_refused(tmp_path):
    results = write_results(tmp_path / "r.json")
    with pytest.raises(BenchkillError, match="r.json: is a benchkill results file"):
        write_text(results, "# report\n")
    with pytest.raises(BenchkillError, match="is a directory"):
        write_text(tmp_path, "x")
    (tmp_path / "f").write_text("x")
    with pytest.raises(BenchkillError, match="is not a directory"):
        write_text(tmp_path / "f" / "out.md", "x")
    with pytest.raises(BenchkillError, match="already exists"):
        check_new_file(results)
    with pytest.raises(BenchkillError, match="exists and is not a directory"):
        check_directory(tmp_path / "f")
    assert sorted(os.listdir(tmp_path)) == ["f", "r.json"]


def test_write_text_creates_the_file_whole_with_the_umask_and_never_replaces_it(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "out.md", "one\n")
        with pytest.raises(BenchkillError, match="out.md: already exists"):
            write_text(tmp_path / "out.md", "two\n")
    finally:
        os.umask(old)
    assert (tmp_path / "out.md").read_text() == "one\n"
    assert stat.S_IMODE((tmp_path / "out.md").stat().st_mode) == 0o644
    assert os.listdir(tmp_path) == ["out.md"]


def test_a_file_created_after_the_check_is_not_replaced(tmp_path, monkeypatch):
    """Another process creates the file between the check and the write (as two commands
    run at once do): the write fails with one line, and that file stays as it was."""
    import benchkill.cli.outputs as outputs

    out = tmp_path / "out.md"
    checked = outputs.refuse_overwrite

    def check_then_other_process_writes(path, inputs=(), what="the output"):
        checked(path, inputs, what)
        Path(path).write_text("the other's\n")

    monkeypatch.setattr(outputs, "refuse_overwrite", check_then_other_process_writes)
    with pytest.raises(BenchkillError, match="out.md: already exists"):
        write_text(out, "mine\n")
    assert out.read_text() == "the other's\n"
    assert os.listdir(tmp_path) == ["out.md"]  # no temporary file left


def test_staged_files_never_replace_a_file_created_after_the_check(tmp_path, monkeypatch):
    import benchkill.cli.outputs as outputs

    out = tmp_path / "figs"
    out.mkdir()
    checked = outputs.refuse_overwrite

    def check_then_other_process_writes(path, inputs=(), what="the output"):
        checked(path, inputs, what)
        if Path(path).name == "b.png":
            Path(path).write_text("the other's")

    monkeypatch.setattr(outputs, "refuse_overwrite", check_then_other_process_writes)
    with pytest.raises(BenchkillError, match="b.png: already exists"):
        with staged_directory(out) as stage:
            for name in ("a.png", "b.png", "c.png"):
                (stage / name).write_text("mine")
    # b.png is the other's; a.png was placed by this command, and taken back
    assert sorted(os.listdir(out)) == ["b.png"]
    assert (out / "b.png").read_text() == "the other's"


def test_staged_files_appear_only_when_all_are_written(tmp_path):
    out = tmp_path / "figs"
    with staged_directory(out) as stage:
        assert stage.parent == out and stage.name.startswith(".benchkill-stage-pid")
        (stage / "a.png").write_text("a")
        (stage / "a.svg").write_text("a")
        assert sorted(os.listdir(out)) == [stage.name]
    assert sorted(os.listdir(out)) == ["a.png", "a.svg"]
    with pytest.raises(RuntimeError):
        with staged_directory(tmp_path / "new") as stage:
            (stage / "b.png").write_text("b")
            raise RuntimeError("drawing failed")
    assert not (tmp_path / "new").exists()  # created for nothing: removed again
    assert sorted(os.listdir(out)) == ["a.png", "a.svg"]


def test_a_staged_file_never_replaces_a_results_file(tmp_path):
    out = tmp_path / "figs"
    out.mkdir()
    precious = write_results(out / "a.png")  # a results file, whatever its name
    before = precious.read_bytes()
    with pytest.raises(BenchkillError, match="is a benchkill results file"):
        with staged_directory(out) as stage:
            (stage / "a.png").write_text("figure")
            (stage / "b.png").write_text("figure")
    assert precious.read_bytes() == before
    assert os.listdir(out) == ["a.png"]


def test_shown_replaces_bytes_that_are_not_utf8():
    assert shown(os.fsdecode(b"run-\xff.json")) == "run-\ufffd.json"
    assert shown("plain.json") == "plain.json"
