"""The GitHub workflow .github/workflows/benchmarks.yml: every benchkill command in it is
one that benchkill accepts, and the steps that need no measurement run here as written."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchkill.cli.main import make_parser
from benchkill.results.store import save
from tests.conftest import make_record, make_results

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "benchmarks.yml"


def steps():
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["instructions"]["steps"]


def step(name_start):
    [found] = [s for s in steps() if s["name"].startswith(name_start)]
    return found


def benchkill_lines():
    return [
        line.strip()
        for s in steps()
        for line in s.get("run", "").splitlines()
        if "python -m benchkill " in line
    ]


def test_every_benchkill_command_parses():
    lines = benchkill_lines()
    assert len(lines) == 3  # base, head, compare
    for line in lines:
        words = shlex.split(line.split(">")[0])
        argv = words[words.index("benchkill") + 1 :]
        args = make_parser(argv).parse_args(argv)
        assert args.command in ("run", "compare")
        if args.command == "run":
            assert args.instructions_only and args.suite == "pass" and args.out


def run_step(s, tmp_path, **env):
    """Run a step's shell script with the workflow's environment variables set."""
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    venv = Path(sys.executable).parent
    environ = {
        **os.environ,
        "PATH": f"{venv}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_WORKSPACE": str(tmp_path),
        **env,
    }
    done = subprocess.run(
        ["bash", "-e", "-c", s["run"]], cwd=tmp_path, env=environ, capture_output=True, text=True
    )
    return done, summary, output


@pytest.mark.parametrize(("factor", "code"), [(1.0, "0"), (1.02, "1")])
def test_compare_step_writes_the_summary_and_the_exit_code(tmp_path, factor, code):
    metric = dict(metric="pass_instructions", unit="instructions")
    base = make_results([make_record([1e6] * 3, **metric)], git_commit="aaaaaaa")
    head = make_results([make_record([1e6 * factor] * 3, **metric)], git_commit="bbbbbbb")
    save(base, tmp_path / "base.json")
    save(head, tmp_path / "head.json")
    done, summary, output = run_step(step("Compare"), tmp_path)
    assert done.returncode == 0, done.stderr  # the step itself never fails
    assert output.read_text() == f"code={code}\n"
    text = summary.read_text()
    assert text.startswith("### benchkill compare: ")
    assert ("**regression**" in text) == (code == "1")
    fail = run_step(step("Fail on a regression"), tmp_path, CODE=code)[0]
    assert fail.returncode == int(code)


def test_base_worktree_step(tmp_path):
    repo = tmp_path
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("base\n")
    subprocess.run([*git, "add", "f"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    (repo / "f").write_text("head\n")
    subprocess.run([*git, "commit", "-qam", "head"], cwd=repo, check=True)
    done = run_step(step("Check out the base"), tmp_path, BASE_SHA=sha)[0]
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runner" / "base" / "f").read_text() == "base\n"
