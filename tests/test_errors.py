"""The foundation's helpers: the one integer check and the one-line error extraction."""

from __future__ import annotations

import pytest

from benchkill.errors import BenchkillError, check_int, one_line


@pytest.mark.parametrize("value", [0, -3, 2.0, True, "1", None])
def test_check_int_refuses_what_is_not_a_positive_int(value):
    with pytest.raises(BenchkillError, match=r"^repeat must be a positive integer, not "):
        check_int(value, "repeat")


def test_check_int_passes_an_int_in_range_through():
    assert check_int(3, "repeat") == 3
    assert check_int(0, "buildable", low=0) == 0
    assert check_int(10, "n", high=10) == 10


def test_check_int_bounds():
    with pytest.raises(BenchkillError, match="^buildable must be an integer >= 0, not -1$"):
        check_int(-1, "buildable", low=0)
    with pytest.raises(BenchkillError, match="^n_ops must be at most 10, not 11$"):
        check_int(11, "n_ops", high=10)


@pytest.mark.parametrize(
    "text, line",
    [
        ("bad thing", "bad thing"),
        ("Traceback (most recent call last):\n  File \"x\"\nInternalError: Check failed: y",
         "InternalError: Check failed: y"),
        ("error: invalid syntax\n --> mod.py:12:3\n", "error: invalid syntax (line 12)"),
        ("", "(no message)"),
    ],
)  # fmt: skip
def test_one_line(text, line):
    assert one_line(text) == line
    assert one_line(RuntimeError(text)) == (line if text else "RuntimeError")


def test_one_line_is_bounded():
    assert len(one_line("x" * 5000)) == 300
