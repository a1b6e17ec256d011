"""The dynamic-dimension spelling shared by the PyTorch and ONNX importers."""

from __future__ import annotations

import pytest

from benchkill.errors import BenchkillError
from benchkill.inputs.dynamic import DynamicDim, check_inputs, parse_all, parse_dynamic


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ("x:0", DynamicDim("x", 0, "x_0", None)),
        ("x:0<=16", DynamicDim("x", 0, "x_0", 16)),
        ("input.1:2=seq", DynamicDim("input.1", 2, "seq", None)),
        ("ids:1=seq<=64", DynamicDim("ids", 1, "seq", 64)),
        (" x:3 ", DynamicDim("x", 3, "x_3", None)),
    ],
)
def test_spellings(spec, want):
    assert parse_dynamic(spec) == want
    assert parse_dynamic(str(want)) == want  # str() spells it back


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x", "is not INPUT:AXIS"),
        ("x:-1", "is not INPUT:AXIS"),
        ("x:0<16", "is not INPUT:AXIS"),
        ("x:0<=0", "at least 1"),
        ("x:0=1bad", "is not INPUT:AXIS"),
        ("", "is not INPUT:AXIS"),
    ],
)
def test_bad_spellings_are_one_line_errors(spec, message):
    with pytest.raises(BenchkillError, match=message) as info:
        parse_dynamic(spec)
    assert "\n" not in str(info.value)


def test_several_at_once_and_their_conflicts():
    assert [d.name for d in parse_all("x:0=b, y:0=b  z:1")] == ["b", "b", "z_1"]
    assert parse_all(None) == ()
    with pytest.raises(BenchkillError, match="given twice"):
        parse_all(["x:0", "x:0<=4"])
    with pytest.raises(BenchkillError, match="two upper bounds"):
        parse_all(["x:0=b<=4", "y:0=b<=8"])


def test_checked_against_the_inputs():
    shapes = {"x": (2, 3), "y": (4,)}
    check_inputs(parse_all("x:1<=3 y:0"), shapes)
    with pytest.raises(BenchkillError, match="no input 'z' \\(inputs: x, y\\)"):
        check_inputs(parse_all("z:0"), shapes)
    with pytest.raises(BenchkillError, match="has 1 axes"):
        check_inputs(parse_all("y:1"), shapes)
    with pytest.raises(BenchkillError, match="example size 3 is above the bound"):
        check_inputs(parse_all("x:1<=2"), shapes)
