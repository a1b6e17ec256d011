"""Module files are read only when they are regular files of at most a stated size: a FIFO
would block the reader forever and /dev/zero fill its memory."""

from __future__ import annotations

import os

import pytest

from benchkill.errors import BenchkillError
from benchkill.relax import text
from benchkill.relax.text import check_regular_file, read_module

SMALL = """
from tvm.script import relax as R

@R.function
def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    return x
"""


def test_a_regular_file_is_read(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SMALL)
    assert check_regular_file(path, 1 << 20, "a module") == len(SMALL)
    assert [gv.name_hint for gv in read_module(path).get_global_vars()] == ["main"]


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "missing"])
def test_what_is_not_a_regular_file_is_refused_unread(tmp_path, kind):
    path = {
        "fifo": tmp_path / "fifo.py",
        "dev_zero": "/dev/zero",
        "directory": tmp_path,
        "missing": tmp_path / "missing.py",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: reading it would block forever
    message = {
        "fifo": "not a regular file",
        "dev_zero": "not a regular file",
        "directory": "Is a directory",
        "missing": "cannot read .*No such file",
    }[kind]
    with pytest.raises(BenchkillError, match=message) as info:
        read_module(path)
    assert "\n" not in str(info.value)


def test_a_file_beyond_the_limit_is_refused_unread(tmp_path, monkeypatch):
    path = tmp_path / "big.py"
    path.write_text(SMALL)
    monkeypatch.setattr(text, "MAX_MODULE_BYTES", 16)
    with pytest.raises(BenchkillError, match=f"{len(SMALL)} bytes, larger than 16"):
        read_module(path)
