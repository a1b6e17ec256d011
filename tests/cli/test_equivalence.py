"""benchkill equivalence: finding the Relax modules of files written here
(tests/cli/equivalence/), building each in a child process, the verdicts, the table, the
mismatch lines, the diffs and the exit code."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
import tvm

import benchkill
from benchkill.cli.main import main
from benchkill.execution import corpus, corpus_task
from benchkill.relax.text import read_module

FIXTURES = Path(__file__).parent / "equivalence"
STYLE = FIXTURES / "test_style_file.py"


def _rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] in corpus_task.STAGES:
            rows[cells[0]] = cells[1:]
    return rows


# --- discovery --------------------------------------------------------------------------------


def test_candidates_are_found_at_every_depth_and_rewriters_are_not():
    found = corpus.find_candidates(ast.parse(STYLE.read_text()))
    assert [(c.kind, c.qualname, c.nested) for c in found] == [
        ("function", "free", False),
        ("ir_module", "TestInAClass.Before", False),
        ("ir_module", "test_inside_a_function.Module", True),
        ("ir_module", "test_does_not_build.Broken", True),
        ("ir_module", "test_rejected_by_tvm.Rejected", True),
    ]
    assert [c.line for c in found] == sorted(c.line for c in found)


def test_isolate_keeps_the_definitions_before_the_candidate_and_the_parameters():
    tree = ast.parse(STYLE.read_text())
    nested = next(c for c in corpus.find_candidates(tree) if c.qualname.endswith(".Module"))
    parameters = corpus.module_parameters(tree)
    assert parameters == {"width": 4}
    module, accessor, name = corpus.isolate(nested, parameters)
    assert name == "test_inside_a_function"
    text = ast.unparse(module)
    # the parametrize value, the module-level parameter, the guarded assignment, the class
    assert "dtype = 'float32'" in text and "width = 4" in text
    assert "shape = (width,)" in text and "class Module" in text
    assert "assert Module" not in text  # a statement after the candidate: left out
    assert ast.unparse(accessor) == "test_inside_a_function()"
    node = module.body[0]
    assert node.lineno == nested.ancestors[0].lineno  # TVMScript finds the source by line


# --- the command, end to end --------------------------------------------------------------


def test_the_command_on_test_style_and_printed_files(capsys, tmp_path):
    diffs = tmp_path / "diffs"
    code = main(
        ["equivalence", str(STYLE), str(FIXTURES / "printed_module.py"), "--jobs", "2"]
        + ["--out", str(diffs)]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith(
        "equivalence: 2 files, 2 with candidates: 6 candidates, 5 built (5 with a Relax "
        "function), 1 not built\n"
    )
    rows = _rows(out)
    # modules, equal, both raise, only TVM, only benchkill, different, no input, unsafe
    assert rows["as-written"] == ["5", "4", "1", "0", "0", "0", "0", "0/0"]
    assert rows["lowered"][:6] == ["5", "4", "1", "0", "0", "0"]
    assert rows["rekilled"][:7] == ["5", "4", "0", "0", "0", "0", "1"]  # TVM rejects one
    assert out.rstrip().endswith("0 mismatch(es)") and "MISMATCH" not in out
    assert not diffs.exists()  # nothing differs: no directory made


@pytest.mark.slow
def test_a_crash_and_a_hang_cost_only_their_own_module(capsys, monkeypatch):
    path = FIXTURES / "crashing_file.py"
    records = corpus_task.check_files([path], ("as-written",), timeout=10)
    errors = {r["name"]: r.get("error") for r in records}
    assert errors["test_crash.Crash"].startswith("child process killed by SIGSEGV")
    assert errors["test_hang.Hang"].startswith("child process timed out after 10 s")
    assert errors["test_first.First"] is None and errors["test_last.Last"] is None  # restarted
    monkeypatch.setattr(corpus_task, "check_files", lambda *a, **k: records)
    code = main(["equivalence", str(path), "--stages", "as-written"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 candidates, 2 built (2 with a Relax function), 2 not built" in out
    assert _rows(out)["as-written"][:2] == ["2", "2"]


def test_a_module_level_importorskip_fails_its_statement_not_the_file():
    """pytest's Skipped is a BaseException, not an Exception: it must not end the child,
    which would give up every module of the file (TVM's ONNX and TFLite test files)."""
    records = corpus_task.check_files([FIXTURES / "skipping_file.py"], ("as-written",))
    assert [(r["name"], r.get("error"), r.get("parsed")) for r in records] == [
        ("AtModuleLevel", None, True),
        ("test_inside_a_function.Inside", None, True),
    ]
    assert [r["stages"]["as-written"]["verdict"] for r in records] == ["equal", "equal"]


def test_stages_and_a_pass_context_are_chosen(capsys):
    code = main(["equivalence", str(STYLE), "--stages", "lowered", "--opt-level", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert list(_rows(out)) == ["lowered"]


# --- mismatches (a wrong benchkill pass, in this process) ----------------------------------


class _Wrong:
    """benchkill's pass made wrong on purpose: it returns its input, or raises."""

    def __init__(self, raises: bool) -> None:
        self.raises = raises

    def __call__(self, **modes):
        def run(mod):
            if self.raises:
                raise benchkill.BenchkillError("broken on purpose")
            return mod

        return run


def _records_in_process(monkeypatch, raises: bool):
    mod = read_module(FIXTURES / "printed_module.py")
    monkeypatch.setattr(benchkill, "KillAfterLastUse", _Wrong(raises))
    result = corpus_task.compare(mod, diffs=True)
    record = {"file": "m.py", "name": "Module", "line": 8, "parsed": True, "relax": True}
    return [{**record, "stages": {"as-written": result}}]


@pytest.mark.parametrize("raises", [False, True])
def test_a_mismatch_is_one_line_and_exit_code_1(raises, monkeypatch, capsys, tmp_path):
    records = _records_in_process(monkeypatch, raises)
    monkeypatch.setattr(corpus_task, "check_files", lambda *a, **k: records)
    diffs = tmp_path / "diffs"
    existing = diffs / "m-Module-8-as-written.diff"
    diffs.mkdir()
    existing.write_text("the user's file\n")
    code = main(["equivalence", str(STYLE), "--stages", "as-written", "--out", str(diffs)])
    out = capsys.readouterr().out
    assert code == 1
    (line,) = [ln for ln in out.splitlines() if ln.startswith("MISMATCH")]
    if raises:
        assert line == (
            "MISMATCH as-written m.py:8 Module: only benchkill raises: "
            "BenchkillError: broken on purpose"
        )
        assert sorted(p.name for p in diffs.iterdir()) == [existing.name]
    else:
        assert re.fullmatch(r"MISMATCH as-written m\.py:8 Module: different: Access path: .+", line)
        assert existing.read_text() == "the user's file\n"  # never overwritten
        written = (diffs / "m-Module-8-as-written-2.diff").read_text()
        assert written.startswith("--- TVM\n+++ benchkill\n") and "R.memory.kill" in written
    assert out.rstrip().endswith("1 mismatch(es)")


def test_unsafe_kills_are_reported_for_every_output():
    mod = tvm.script.from_source(
        """
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")):
            a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
            R.memory.kill_tensor(a)
            b = R.call_packed("f", a, ty_args=(R.Tensor((4,), "float32"),))
            return b
    """.replace("\n        ", "\n")
    )
    result = corpus_task.compare(tvm.IRModule({"main": mod}))
    assert result["verdict"] == "equal"
    assert result["unsafe"] == {m: ["use-after-kill a"] for m in result["unsafe"]}
    assert set(result["unsafe"]) == {"tvm", "benchkill", "beyond", "legacy"}


def test_python_files_of_a_directory(tmp_path):
    shutil.copy(STYLE, tmp_path / "a.py")
    (tmp_path / "sub").mkdir()
    shutil.copy(STYLE, tmp_path / "sub" / "b.py")
    (tmp_path / "notes.txt").write_text("not python")
    files = corpus_task.python_files([tmp_path, STYLE])
    assert files == [tmp_path / "a.py", tmp_path / "sub" / "b.py", STYLE]


@pytest.mark.slow
def test_sigterm_stops_the_command_and_its_children_at_once():
    """The hanging module would hold a child for the whole timeout: SIGTERM (like Ctrl-C)
    kills the running children and ends the command with exit code 130."""
    import os
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "benchkill", "equivalence", str(FIXTURES / "crashing_file.py")]
    proc = subprocess.Popen([*command, "--timeout", "300"], stderr=subprocess.PIPE, text=True)
    mark = f"benchkill-corpus-pid{proc.pid}-"
    running = []
    deadline = time.monotonic() + 240  # a guard against a command that never starts one
    while not running and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        running = [p for p in os.listdir("/proc") if p.isdigit() and mark in _cmdline(p)]
    assert running, "no child started"
    proc.send_signal(signal.SIGTERM)
    # within the guard, far less than the child's 300 s timeout: it did not wait it out
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "benchkill: interrupted" in err
    left = [
        p for p in os.listdir("/proc") if p.isdigit() and mark in _cmdline(p)
    ]  # no child of it still running
    assert left == []


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""
