"""The one table of colours, orders and styles every figure uses.

A kill variant and an implementation keep their colour in every figure (benchkill and
TVM are both: the same colour either way), and are listed in one fixed order: the
baseline without kills first, then TVM's pass, benchkill's, its beyond mode, the pre-fix
legacy mode.  Exec mode and allocator never take a colour: bars show them as hatches,
lines as line styles.  Colours are the Okabe-Ito set (told apart with colour blindness).
"""

from __future__ import annotations

from typing import Any

from benchkill.vocabulary import (
    EXEC_MODES,
    FAMILIES,
    IMPLS,
    KILLS,
    MEMORY_CFGS,
    MODEL_FAMILY,
    kill_arg,
)
from benchkill.vocabulary import kill_name as kill_name

#: Kill variants in the order figures, tables and legends list them (None: no kills).
KILL_ORDER: tuple[str | None, ...] = tuple(kill_arg(name) for name in KILLS)
#: Implementations of the pass suite, in their order.
IMPL_ORDER = IMPLS
#: The pass suite's generated families, in the order panels and tables show them.
FAMILY_ORDER = tuple(family for family in FAMILIES if family != MODEL_FAMILY)

#: Colour of each kill variant and implementation ("none": the build without kills).
COLOURS = {
    "none": "#7f7f7f",  # grey
    "tvm": "#E69F00",  # orange
    "benchkill": "#0072B2",  # blue
    "beyond": "#009E73",  # green
    "legacy": "#D55E00",  # vermillion
    "naive": "#CC79A7",  # reddish purple
    "floor": "#56B4E9",  # sky blue (the pass suite's floor work, not a pass)
}
#: Colour of anything not in :data:`COLOURS` (an unknown variant from a newer suite).
OTHER_COLOUR = "#000000"
#: (colour, line style) of the k-th line of a panel whose lines are told apart by their
#: parameters alone (e.g. the sizes of one asv or pytest-benchmark benchmark), in turn:
#: no colour of a variant, so none is taken for one.
OTHER_LINES = tuple(
    (shade, style) for shade in ("#000000", "#999999") for style in ("-", "--", ":", "-.")
)

#: Words a legend uses for a kill variant.
KILL_LABELS = {
    "none": "no kills",
    "tvm": "TVM's kills",
    "benchkill": "benchkill",
    "beyond": "beyond",
    "legacy": "legacy (pre-fix)",
}
#: Words a legend uses for an implementation.
IMPL_LABELS = {
    "benchkill": "benchkill",
    "tvm": "TVM C++",
    "naive": "naive port",
    "floor": "floor (FFI work)",
}

#: Order of the (exec mode, allocator) configurations: the default (bytecode, pooled) first.
MODE_ORDER = tuple((mode, cfg) for cfg in MEMORY_CFGS for mode in EXEC_MODES)
#: (exec mode, allocator) -> bar hatch; the default (bytecode, pooled) is plain.
HATCHES = dict(zip(MODE_ORDER, ("", "//", "..", "xx"), strict=True))
#: (exec mode, allocator) -> line style.
LINESTYLES = dict(zip(MODE_ORDER, ("-", "--", ":", "-."), strict=True))


def colour(name: Any) -> str:
    """The colour of a kill variant (``None`` or a name) or of an implementation."""
    return COLOURS.get(kill_name(name), OTHER_COLOUR)


def kill_rank(kill: Any) -> tuple[int, str]:
    """Sort key: the order of :data:`KILL_ORDER`, unknown variants after it by name."""
    key = kill_name(kill)
    names = [kill_name(k) for k in KILL_ORDER]
    return (names.index(key), "") if key in names else (len(names), key)


def impl_rank(impl: str) -> tuple[int, str]:
    """Sort key: the order of :data:`IMPL_ORDER`, unknown implementations after it."""
    return (IMPL_ORDER.index(impl), "") if impl in IMPL_ORDER else (len(IMPL_ORDER), impl)


def family_rank(family: str) -> tuple[int, str]:
    """Sort key: the order of :data:`FAMILY_ORDER`, other families after it by name."""
    return (
        (FAMILY_ORDER.index(family), "") if family in FAMILY_ORDER else (len(FAMILY_ORDER), family)
    )


def mode_rank(mode: tuple[str, str]) -> tuple[int, tuple[str, str]]:
    """Sort key of an (exec mode, allocator) pair."""
    return (MODE_ORDER.index(mode), mode) if mode in MODE_ORDER else (len(MODE_ORDER), mode)


def mode_label(mode: tuple[str, str]) -> str:
    """``"compiled"``, ``"bytecode, naive allocator"``: the pooled allocator is the default."""
    exec_mode, allocator = mode
    return exec_mode if allocator == "pooled" else f"{exec_mode}, {allocator} allocator"


def hatch(mode: tuple[str, str]) -> str:
    return HATCHES.get(mode, "++")


def linestyle(mode: tuple[str, str]) -> str:
    return LINESTYLES.get(mode, "-")
