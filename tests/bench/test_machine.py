"""Metadata of this machine and of the code a run measured."""

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchkill.bench.machine import collect_machine, git_state, machine_name, python_build


def test_collect_machine_describes_this_machine():
    m = collect_machine()
    assert m.name and "/" not in m.name
    assert m.cores == os.cpu_count()
    assert m.python and m.benchkill_version
    assert m.tvm_version and m.tvm_version.startswith("0.27")
    import tvm_ffi

    assert m.tvm_ffi_version == tvm_ffi.__version__  # the release TVM runs on
    assert m.memory_bytes is None or m.memory_bytes > 2**20
    assert m.python_build == python_build()


def test_the_python_build_names_the_installation_and_the_compiler():
    build = python_build()
    assert build.startswith(f"{sys.base_prefix} (")
    assert build.endswith(f", {platform.python_compiler()})")
    assert "  " not in build  # platform pads the build date's day with a space


def test_another_interpreter_of_this_machine_has_another_build():
    """The field tells interpreters apart: run its function in another Python found here."""
    others = [
        p
        for p in (shutil.which("python3"), "/usr/bin/python3", "/usr/local/bin/python3")
        if p and Path(p).exists()
    ]
    code = "import sys; sys.path.insert(0, sys.argv[1]); from benchkill.bench.machine "
    code += "import python_build; print(python_build())"
    project = str(Path(__file__).resolve().parents[2])
    builds = {
        subprocess.run(
            [p, "-c", code, project], capture_output=True, text=True, check=True
        ).stdout.strip()
        for p in others
    }
    builds.discard(python_build())
    if not builds:
        pytest.skip("no other Python installation on this machine")
    assert all(b.split(" (")[0] != sys.base_prefix for b in builds)


def test_machine_name_is_filesystem_safe():
    assert machine_name("node-7.example.org") == "node-7"
    assert machine_name("we ird/host") == "we_ird_host"
    assert machine_name("") == "unknown"


def test_git_state(tmp_path):
    assert git_state(tmp_path) == (None, None)
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    for cmd in (["init", "-q"], ["add", "f"], ["commit", "-q", "-m", "x"]):
        if cmd[0] == "add":
            (tmp_path / "f").write_text("1")
        subprocess.run(["git", *cmd], cwd=tmp_path, check=True, env=env)
    commit, dirty = git_state(tmp_path)
    assert commit and len(commit) >= 7 and dirty is False
    (tmp_path / "f").write_text("2")
    assert git_state(tmp_path) == (commit, True)
