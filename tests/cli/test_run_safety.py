"""``benchkill run`` never mislabels or loses data: resume onto changed code, retrying
failed cases, file modes, default names, and compare/report showing a mixed file."""

import json
import os
import stat
from dataclasses import replace

import pytest

from benchkill.bench.machine import collect_machine
from benchkill.bench.model import FAILED
from benchkill.cli import cmd_run
from benchkill.cli.main import main
from benchkill.results.store import load, save
from tests.conftest import make_record, make_results


@pytest.fixture
def code(monkeypatch):
    """Set the git state ``benchkill run`` sees: ``code["commit"]``, ``code["dirty"]``."""
    state = {"commit": "aaaaaaa", "dirty": False}
    real = collect_machine()

    def machine():
        return replace(real, git_commit=state["commit"], git_dirty=state["dirty"])

    monkeypatch.setattr(cmd_run, "collect_machine", machine)
    return state


def test_resume_onto_other_code_refuses_unless_allowed_and_records_keep_their_commit(
    fake_suite, code, tmp_path, capsys
):
    path = tmp_path / "r.json"
    fake_suite.interrupt_at = 2
    assert main(["run", "--out", str(path)]) == 130
    fake_suite.interrupt_at = None
    code["commit"] = "bbbbbbb"
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["run", "--resume", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "measured with commit aaaaaaa" in err
    assert "the code now is bbbbbbb" in err and "--allow-code-change" in err
    assert path.read_bytes() == before and fake_suite.calls == [0, 1, 2]

    assert main(["run", "--resume", str(path), "--allow-code-change"]) == 0
    assert "warning:" in capsys.readouterr().err
    results = load(path)
    commits = {r.case: r.git_commit for r in results.records}
    assert commits == {
        "fake:case[i=0]": "aaaaaaa",
        "fake:case[i=1]": "aaaaaaa",
        "fake:case[i=2]": "bbbbbbb",
        "fake:case[i=3]": "bbbbbbb",
    }
    assert results.machine.git_commit == "aaaaaaa"  # where the run started, not rewritten
    assert results.code_states == (("aaaaaaa", False), ("bbbbbbb", False))

    assert main(["compare", str(path), str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"warning: {path} holds records measured by different code (aaaaaaa, bbbbbbb)"
    assert out[1] == out[0]  # base and new: the same file here
    assert main(["compare", str(path), str(path), "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert len(warnings) == 3 and warnings[0] == warnings[1]
    assert warnings[2].startswith("both runs measured the same code")
    report = tmp_path / "report.md"
    assert main(["report", str(path), "--out", str(report)]) == 0
    assert "| mixed: aaaaaaa, bbbbbbb |" in report.read_text()


def test_resume_onto_the_same_code_needs_no_flag_and_dirty_trees_change_it(
    fake_suite, code, tmp_path, capsys
):
    path = tmp_path / "r.json"
    fake_suite.interrupt_at = 1
    assert main(["run", "--out", str(path)]) == 130
    fake_suite.interrupt_at = 2
    assert main(["run", "--resume", str(path)]) == 130  # same commit, clean: fine
    code["dirty"] = True  # uncommitted changes since: other code
    fake_suite.interrupt_at = None
    capsys.readouterr()
    assert main(["run", "--resume", str(path)]) == 2
    assert "aaaaaaa, the code now is aaaaaaa (dirty)" in capsys.readouterr().err
    assert len(load(path).cases) == 2


def test_retry_failed_measures_the_failed_cases_again_once(fake_suite, tmp_path, capsys):
    path = tmp_path / "r.json"
    fake_suite.raise_at = (1, 3)
    fake_suite.expected_at = (2,)
    assert main(["run", "--out", str(path)]) == 3
    assert main(["run", "--resume", str(path)]) == 3  # nothing left to do: still failed
    fake_suite.raise_at = ()
    fake_suite.calls.clear()
    assert main(["run", "--resume", str(path), "--retry-failed"]) == 0
    assert fake_suite.calls == [1, 3]  # only the failed ones; the expected failure stays
    results = load(path)
    assert sorted(c.key for c in results.cases) == [f"fake:case[i={i}]" for i in range(4)]
    assert not [r for r in results.records if r.status == FAILED]
    assert len({r.key for r in results.records}) == len(results.records) == 7
    assert "(2 already done)" in capsys.readouterr().err


def test_results_get_the_umask_and_resume_keeps_the_mode(fake_suite, tmp_path):
    path = tmp_path / "r.json"
    old = os.umask(0o022)
    try:
        fake_suite.interrupt_at = 1
        assert main(["run", "--out", str(path)]) == 130
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        path.chmod(0o640)
        fake_suite.interrupt_at = None
        assert main(["run", "--resume", str(path)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["r.json"]  # no lock or temporary file left


def test_default_names_carry_microseconds_and_never_replace_a_file(
    fake_suite, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--quick"]) == 0
    assert main(["run", "--quick"]) == 0
    machine = collect_machine()
    names = sorted(p.name for p in (tmp_path / "results" / machine.name).iterdir())
    assert len(names) == 2 and all(n[15] == "." and n[16:22].isdigit() for n in names)

    taken = tmp_path / "results" / machine.name / "taken.json"
    save(make_results([make_record()]), taken)
    before = taken.read_bytes()
    real = cmd_run.default_path
    paths = iter([taken, taken])  # the clock gives the name of an existing file twice

    def default_path(machine):
        return next(paths, None) or real(machine)

    monkeypatch.setattr(cmd_run, "default_path", default_path)
    capsys.readouterr()
    assert main(["run", "--quick"]) == 0
    assert taken.read_bytes() == before
    assert "taken.json" not in capsys.readouterr().out
    assert len(list((tmp_path / "results" / machine.name).iterdir())) == 4


def test_compare_when_every_case_of_the_new_run_crashed_is_newly_failed(tmp_path, capsys):
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    ok = [make_record(suite="fake", name="case", params={"i": i}) for i in range(3)]
    save(make_results(ok), base)
    crashes = [
        make_record((), "case", "", suite="fake", name="case", params={"i": i}, status=FAILED)
        for i in range(3)
    ]
    save(make_results([replace(c, error="RuntimeError: boom") for c in crashes]), new)
    assert main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert out.count("newly failed") == 3 and "no case in common" not in out
