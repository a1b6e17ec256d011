"""``benchkill run/compare/plot/report`` through ``cli.main`` and once as a real process.

Bad input (missing files, unreadable JSON, another schema version, no case in common,
an unknown suite, an invalid --factor) must give one line on stderr, exit code 2, no
traceback, and leave every existing file as it was.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchkill.bench.machine import collect_machine
from benchkill.cli.main import main
from benchkill.results.store import SCHEMA_VERSION, load
from tests.conftest import write_results

#: The source tree whose benchkill the child processes must run.
PROJECT = Path(__file__).resolve().parents[2]


def one_error_line(capsys, argv, fragment):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("benchkill: error: ")
    assert fragment in lines[0], lines[0]


# --- run -----------------------------------------------------------------------------


def test_run_writes_default_path(fake_suite, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--quick"]) == 0
    machine = collect_machine()
    [path] = (tmp_path / "results" / machine.name).glob("*.json")
    assert path.name.endswith(f"-{machine.git_commit or 'nogit'}.json")
    assert path.name[:8].isdigit() and path.name[8] == "T"
    results = load(path)
    assert results.settings.suites == ("fake",) and results.settings.quick
    assert results.settings.command == ("benchkill", "run", "--suite", "fake", "--quick")
    assert len(results.cases) == 2
    assert capsys.readouterr().out.startswith(f"wrote results/{machine.name}/")


def test_run_exit_code_says_whether_a_case_failed_unexpectedly(fake_suite, tmp_path, capsys):
    fake_suite.expected_at = (0,)
    assert main(["run", "--out", str(tmp_path / "a.json")]) == 0
    fake_suite.raise_at = (1,)
    assert main(["run", "--out", str(tmp_path / "b.json")]) == 3  # not measured
    assert "fake:case[i=1] case: RuntimeError: case 1 broke" in capsys.readouterr().err
    assert len(load(tmp_path / "b.json").cases) == 4  # the run went on


def test_interrupted_run_is_kept_and_resumed(fake_suite, tmp_path, capsys):
    path = tmp_path / "r.json"
    fake_suite.interrupt_at = 2
    assert main(["run", "--out", str(path)]) == 130
    assert f"benchkill run --resume {path}" in capsys.readouterr().err
    assert len(load(path).cases) == 2
    fake_suite.interrupt_at = None
    assert main(["run", "--resume", str(path)]) == 0
    results = load(path)
    assert len(results.cases) == 4 and len(results.settings.resumed_at) == 1
    assert results.settings.finished_at is not None


def test_unknown_suite(fake_suite, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    one_error_line(capsys, ["run", "--suite", "nope"], "unknown suite 'nope'")
    assert not (tmp_path / "results").exists()


def test_run_does_not_overwrite_an_existing_file(fake_suite, tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text("precious")
    one_error_line(capsys, ["run", "--out", str(path)], "already exists")
    assert path.read_text() == "precious"


def test_bad_resume_leaves_the_file_alone(fake_suite, tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1, "machine": ')
    one_error_line(capsys, ["run", "--resume", str(broken)], "invalid JSON")
    assert broken.read_text() == '{"schema_version": 1, "machine": '
    path = tmp_path / "r.json"
    assert main(["run", "--quick", "--out", str(path)]) == 0
    capsys.readouterr()
    before = path.read_bytes()
    one_error_line(capsys, ["run", "--resume", str(path), "--out", "x.json"], "do not give --out")
    one_error_line(
        capsys, ["run", "--resume", str(path), "--suite", "other"], "was run with --suite"
    )
    assert path.read_bytes() == before


# --- compare -------------------------------------------------------------------------


def test_compare_a_a_is_no_change(tmp_path, capsys):
    a = write_results(tmp_path / "a.json")
    assert main(["compare", str(a), str(a)]) == 0
    out = capsys.readouterr().out
    assert "no change" in out and "pass:chain[bindings=100] pass_time" in out


def test_compare_regression_exits_1_and_json(tmp_path, capsys):
    a, b = write_results(tmp_path / "a.json"), write_results(tmp_path / "b.json", 1.25)
    assert main(["compare", str(a), str(b)]) == 1
    assert "regression" in capsys.readouterr().out
    assert main(["compare", str(b), str(a), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["improvement"] == 1
    assert main(["compare", str(a), str(b), "--factor", "1.5"]) == 0


BAD_COMPARE = [
    ("missing", ["compare", "{missing}", "{a}"], "no such file"),
    ("unreadable", ["compare", "{a}", "{garbage}"], "invalid JSON"),
    ("schema", ["compare", "{a}", "{future}"], f"schema_version {SCHEMA_VERSION + 1}"),
    ("no common case", ["compare", "{a}", "{other}"], "no case in common"),
    ("factor text", ["compare", "{a}", "{a}", "--factor", "abc"], "invalid factor 'abc'"),
    ("factor below 1", ["compare", "{a}", "{a}", "--factor", "0.9"], "must be a number above 1"),
    ("factor nan", ["compare", "{a}", "{a}", "--factor", "nan"], "invalid factor"),
    ("alpha", ["compare", "{a}", "{a}", "--alpha", "2"], "invalid alpha"),
    ("regex", ["compare", "{a}", "{a}", "--only", "("], "invalid regular expression"),
    ("plot missing", ["plot", "{missing}", "--out", "{figs}"], "no such file"),
    ("report schema", ["report", "{future}", "--out", "{report}"], "schema_version"),
]


@pytest.mark.parametrize("what,argv,fragment", [pytest.param(*b, id=b[0]) for b in BAD_COMPARE])
def test_bad_input_is_one_line_exit_2_and_damages_nothing(tmp_path, capsys, what, argv, fragment):
    files = {
        "a": write_results(tmp_path / "a.json"),
        "other": write_results(tmp_path / "other.json", name="tree"),
        "future": write_results(tmp_path / "future.json", version=SCHEMA_VERSION + 1),
        "garbage": tmp_path / "garbage.json",
        "report": tmp_path / "report.md",
    }
    files["garbage"].write_text("{garbage")
    files["report"].write_text("# an older report\n")
    before = {p: p.read_bytes() for p in files.values()}
    paths = dict(files, missing=tmp_path / "missing.json", figs=tmp_path / "figs")
    one_error_line(capsys, [a.format(**paths) for a in argv], fragment)
    assert {p: p.read_bytes() for p in files.values()} == before
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in files.values())


def test_plot_and_report_commands(tmp_path, capsys):
    a, b = write_results(tmp_path / "a.json"), write_results(tmp_path / "b.json", 1.25)
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "figs")]) == 0
    captured = capsys.readouterr()
    assert captured.out.split() == [
        str(tmp_path / "figs" / f"history_pass_pass_time.{e}") for e in ("png", "svg")
    ]
    assert "note: skipped VM peak memory" in captured.err
    report = tmp_path / "r.md"
    assert main(["report", str(a), str(b), "--out", str(report)]) == 0
    assert "regression" in report.read_text()


# --- a real process ------------------------------------------------------------------


def test_real_process_bad_input_and_regression(tmp_path):
    a, b = write_results(tmp_path / "a.json"), write_results(tmp_path / "b.json", 1.25)
    env = dict(os.environ, PYTHONPATH=str(PROJECT), PYTHONWARNINGS="ignore")

    def bk(*args):
        return subprocess.run(
            [sys.executable, "-m", "benchkill", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )

    bad = bk("compare", str(a), str(tmp_path / "missing.json"), "--factor", "1.2")
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"benchkill: error: {tmp_path / 'missing.json'}: no such file"
    bad = bk("run", "--suite", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown suite" in bad.stderr
    regression = bk("compare", str(a), str(b))
    assert regression.returncode == 1, regression.stderr
    assert "regression" in regression.stdout


SLOW_SUITE = """
import time
from benchkill.bench.model import CaseSpec, Record
NAME = "fake"
def cases(quick):
    return [CaseSpec("fake", "case", {"i": i}) for i in range(4)]
def run_case(spec):
    if spec.params["i"] == 2:
        time.sleep(120)
    return [Record("fake", "case", spec.params, "t", "seconds", samples=(1.0, 1.1, 1.2))]
"""

LAUNCH = (
    "import sys, benchkill.bench.suites as s; "
    "s.SUITES.clear(); s.SUITES['fake'] = 'slow_fake_suite'; "
    "from benchkill.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def _as_from_a_terminal() -> None:
    """The child's SIGINT and SIGHUP at their defaults, as in a terminal: a test run started
    in the background (``nohup``, ``&`` in a script) has them ignored, the child would
    inherit that, and benchkill leaves an ignored signal ignored."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_slow_run(tmp_path, path):
    """A real `benchkill run` process, stuck in its third case once two are saved."""
    (tmp_path / "slow_fake_suite.py").write_text(SLOW_SUITE)
    search = os.pathsep.join([str(tmp_path), str(PROJECT)])  # the fake suite, this benchkill
    env = dict(os.environ, PYTHONPATH=search, PYTHONWARNINGS="ignore")
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "run", "--out", str(path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if path.exists() and len(load(path).cases) == 2:  # a reader never sees half a file
            return proc
        if proc.poll() is not None:
            raise AssertionError(proc.communicate())
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the run did not reach its third case")


@pytest.mark.parametrize(
    "sig",
    [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
    ids=["ctrl-c", "term", "hangup", "kill"],
)
def test_real_process_interrupted_or_killed_keeps_finished_cases(fake_suite, tmp_path, capsys, sig):
    path = tmp_path / "r.json"
    proc = start_slow_run(tmp_path, path)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig != signal.SIGKILL:  # SIGTERM and SIGHUP unwind like Ctrl-C
        assert proc.returncode == 130
        assert f"complete them with: benchkill run --resume {path}" in err
        assert "Traceback" not in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert [c.key for c in load(path).cases] == ["fake:case[i=0]", "fake:case[i=1]"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert (tmp_path / ".r.json.lock").exists() == (sig == signal.SIGKILL)
    assert main(["run", "--resume", str(path)]) == 0  # completes with the in-process fake
    assert len(load(path).cases) == 4
