"""Metadata of this machine and of the code a run measured."""

import ctypes.util
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchkill.bench.machine import (
    collect_machine,
    describe_malloc,
    git_state,
    machine_name,
    mapped_file,
    python_build,
)


def _python_build_from_sys_version() -> str:
    """What ``python_build`` should say, read from ``sys.version`` (``3.11.7 (main, May  9
    2026, 07:35:25) [GCC 12.2.0]``): the installation, the build tag and date, the compiler."""
    tag_and_date = sys.version.split("(", 1)[1].split(")", 1)[0]
    compiler = sys.version.rsplit("[", 1)[1].rstrip("]")
    return f"{sys.base_prefix} ({' '.join(tag_and_date.replace(',', ' ').split())}, {compiler})"


def _malloc_expected() -> str:
    """The malloc this process should report, from the C library's own name and version
    (``confstr``) or the preloaded library's file name."""
    preload = os.environ.get("LD_PRELOAD", "").split()
    if preload:
        return Path(preload[0]).name
    return f"{ctypes.util.find_library('c')} ({os.confstr('CS_GNU_LIBC_VERSION')})"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="a glibc system's malloc")
def test_collect_machine_describes_this_machine(monkeypatch):
    for name in list(os.environ):  # glibc's malloc settings would be listed too
        if name.startswith("MALLOC_") or name == "GLIBC_TUNABLES":
            monkeypatch.delenv(name)
    m = collect_machine()
    assert m.name and "/" not in m.name
    assert m.cores == os.cpu_count()
    assert m.python and m.benchkill_version
    assert m.tvm_version and m.tvm_version.startswith("0.27")
    import tvm_ffi

    assert m.tvm_ffi_version == tvm_ffi.__version__  # the release TVM runs on
    assert m.memory_bytes is None or m.memory_bytes > 2**20
    assert m.python_build == _python_build_from_sys_version()
    assert m.malloc == _malloc_expected()


MAPS = """\
55d0c0000000-55d0c0001000 r--p 00000000 fd:01 12 /usr/bin/python3.11
7f0000000000-7f0000022000 r--p 00000000 fd:01 34 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000022000-7f0000197000 r-xp 00022000 fd:01 34 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
7f1000000000-7f1000100000 r-xp 00000000 fd:01 56 /opt/lib/my malloc.so
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
"""


def test_mapped_file_names_the_file_an_address_lies_in():
    assert mapped_file(0x7F0000022000, MAPS) == "/usr/lib/x86_64-linux-gnu/libc.so.6"
    assert mapped_file(0x7F0000196FFF, MAPS) == "/usr/lib/x86_64-linux-gnu/libc.so.6"
    assert mapped_file(0x7F1000000010, MAPS) == "/opt/lib/my malloc.so"  # a space in it
    assert mapped_file(0x7F0000197000, MAPS) is None  # the end is not in the range
    assert mapped_file(0x7F0000200010, MAPS) is None  # anonymous memory
    assert mapped_file(0x7FFD00000010, MAPS) is None  # [stack] is no file
    assert mapped_file(0x10, "garbage\nzz-yy r-xp 0 0 0 /lib/x.so\n") is None


def test_describe_malloc_names_the_library_and_glibc_settings():
    glibc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    assert describe_malloc(glibc, "glibc 2.36", {}) == "libc.so.6 (glibc 2.36)"
    assert describe_malloc("/lib/libc-2.31.so", "glibc 2.31", {}) == "libc-2.31.so (glibc 2.31)"
    assert describe_malloc("/usr/lib/libjemalloc.so.2", "glibc 2.36", {}) == "libjemalloc.so.2"
    env = {"MALLOC_TOP_PAD_": "1", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "X": "1"}
    assert describe_malloc(glibc, "", env) == (
        "libc.so.6; GLIBC_TUNABLES=glibc.malloc.tcache_count=0; MALLOC_TOP_PAD_=1"
    )
    assert describe_malloc(None, "glibc 2.36", {"MALLOC_ARENA_MAX": ""}) == "unknown"


def _malloc_of_a_child(**env: str) -> str:
    """What :func:`malloc_in_use` says in a new Python process with ``env`` added."""
    code = "from benchkill.bench.machine import malloc_in_use; print(malloc_in_use())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
        cwd=Path(__file__).resolve().parents[2],
    )
    return out.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="a glibc system's malloc")
def test_a_process_without_a_preload_allocates_with_glibc():
    plain = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    code = "from benchkill.bench.machine import malloc_in_use; print(malloc_in_use())"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=plain
    ).stdout.strip()
    assert out.startswith("libc") and f"(glibc {platform.libc_ver()[1]})" in out
    tuned = _malloc_of_a_child(LD_PRELOAD="", MALLOC_ARENA_MAX="2")
    assert tuned.startswith("libc") and tuned.endswith("; MALLOC_ARENA_MAX=2")


def test_a_preloaded_jemalloc_is_the_malloc_in_use():
    """The library the dynamic linker put in front of glibc, as TVM's allocations see it
    (.ci/run installs Debian's libjemalloc2)."""
    jemalloc = ctypes.util.find_library("jemalloc")
    if jemalloc is None:
        pytest.skip("no libjemalloc on this machine (Debian: apt-get install libjemalloc2)")
    assert _malloc_of_a_child(LD_PRELOAD=jemalloc) == Path(jemalloc).name


def test_the_python_build_names_the_installation_and_the_compiler():
    build = python_build()
    assert build == _python_build_from_sys_version()
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
