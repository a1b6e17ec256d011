"""The exit code means one thing in every command: 0 done, 1 the answer is bad, 2 the
input is bad, 3 the measurement could not be made; each error is one line on stderr.

Code 2 across every command is :mod:`tests.cli.test_bad_input_matrix`; a full disk on
stdout (3) is in :mod:`tests.cli.test_main`.  Here: each code from real commands, and the
errors behind them.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from benchkill.cli import outputs
from benchkill.cli.main import main
from benchkill.errors import BenchkillError, ExitCode, MeasurementError
from benchkill.reporting import trust
from benchkill.results.store import save
from tests.conftest import make_record, make_results, write_results

#: A lowered module that kills its own parameter (a kill-param violation).
KILLS_A_PARAMETER = """from tvm.script import relax as R

@R.function(pure=False)
def main(x: R.Tensor((4,), "float32")):
    _ = R.memory.kill_tensor(x)
    return x
"""

#: A module that builds and whose run fails: it calls a packed function nobody registered.
RUN_FAILS = """from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4,), "float32")):
    y = R.call_pure_packed("benchkill.test.no_such_function", x, ty_args=R.Tensor((4,), "float32"))
    return y
"""


def run(capsys, argv: list[str]) -> tuple[int, str, list[str]]:
    """(exit code, stdout, stderr lines) of ``benchkill ARGV``."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def one_error(lines: list[str], fragment: str) -> None:
    assert len(lines) == 1 and lines[0].startswith("benchkill: error: "), lines
    assert fragment in lines[0], lines[0]


def test_the_codes_and_the_errors_that_become_them():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 130]
    assert BenchkillError("x").exit_code == ExitCode.BAD_INPUT
    assert MeasurementError("x").exit_code == ExitCode.NOT_MEASURED
    assert issubclass(MeasurementError, BenchkillError)  # library code catching either


# --- 0 and 1: done, and the answer is bad ------------------------------------------------


def test_compare_is_0_without_and_1_with_a_regression(tmp_path, capsys):
    a, b = write_results(tmp_path / "a.json"), write_results(tmp_path / "b.json", 1.25)
    assert run(capsys, ["compare", a, a])[0] == ExitCode.OK
    code, out, err = run(capsys, ["compare", a, b])
    assert code == ExitCode.BAD_ANSWER and "regression" in out and err == []


def test_verify_is_1_on_a_violation(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(KILLS_A_PARAMETER)
    code, out, err = run(capsys, ["verify", path])
    assert code == ExitCode.BAD_ANSWER and "kill-param" in out and err == []


# --- 3: the measurement could not be made -------------------------------------------------


def test_run_is_3_when_a_case_fails(fake_suite, tmp_path, capsys):
    fake_suite.raise_at = (1,)
    code, _, err = run(capsys, ["run", "--out", tmp_path / "r.json"])
    assert code == ExitCode.NOT_MEASURED
    assert err[-2:] == [
        "1 record(s) failed unexpectedly:",
        "  fake:case[i=1] case: RuntimeError: case 1 broke on two lines",
    ]


def test_plot_is_3_with_nothing_to_draw(tmp_path, capsys):
    failed = make_record((), "case", "", status="failed", error="RuntimeError: boom")
    path = tmp_path / "failed.json"
    save(make_results([failed]), path)
    code, _, err = run(capsys, ["plot", path, "--out", tmp_path / "figs"])
    assert code == ExitCode.NOT_MEASURED
    one_error(err, "nothing to draw")
    assert not (tmp_path / "figs").exists()


@pytest.mark.slow
def test_equivalence_is_3_when_the_files_hold_no_module(tmp_path, capsys):
    path = tmp_path / "plain.py"
    path.write_text("x = 1\n")
    code, _, err = run(capsys, ["equivalence", path])
    assert code == ExitCode.NOT_MEASURED
    one_error(err[-1:], "no Relax modules found in")


@pytest.mark.slow
def test_memory_is_3_when_a_variant_cannot_run(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(RUN_FAILS)
    code, out, err = run(capsys, ["memory", path, "--kill", "none", "--no-trace"])
    assert code == ExitCode.NOT_MEASURED
    assert "kill=none: run failed: " in out and "benchkill.test.no_such_function" in out
    one_error(err, "not measured: kill=none (bytecode)")


def _child(argv: list[str]):
    """trust's child runner, running ``argv`` instead of ``benchkill run``."""
    real = trust._subprocess

    def run_child(_argv: list[str], env: dict[str, str]) -> int:
        return real(argv, env)

    return run_child


def test_trust_is_3_when_a_run_crashes(tmp_path, capsys, monkeypatch):
    crash = [sys.executable, "-c", "raise SystemExit('the run crashed')"]
    monkeypatch.setattr(trust, "_subprocess", _child(crash))
    code, _, err = run(capsys, ["trust", "--repeats", "2", "--out", tmp_path / "runs"])
    assert code == ExitCode.NOT_MEASURED
    one_error(err, "failed (exit code 1): the run crashed")


def test_trust_passes_a_runs_bad_input_on_as_2(tmp_path, capsys, monkeypatch):
    bad = [sys.executable, "-m", "benchkill", "run", "--suite", "nosuch"]
    monkeypatch.setattr(trust, "_subprocess", _child(bad))
    code, _, err = run(capsys, ["trust", "--repeats", "2", "--out", tmp_path / "runs"])
    assert code == ExitCode.BAD_INPUT
    one_error(err, "failed (exit code 2): unknown suite 'nosuch'")


@pytest.mark.parametrize(
    "number, error",
    [
        (errno.ENOSPC, MeasurementError),
        (errno.EIO, MeasurementError),
        (errno.EACCES, BenchkillError),
        (errno.EROFS, BenchkillError),
    ],
)
def test_a_write_the_machine_could_not_make_is_3_a_place_one_cannot_write_to_2(number, error):
    with pytest.raises(BenchkillError) as info:
        with outputs.writing(Path("out.md")):
            raise OSError(number, "the reason", "out.md")
    assert type(info.value) is error
    assert str(info.value) == "out.md: cannot write: the reason"
