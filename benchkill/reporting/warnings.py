"""Why two runs may not compare: one line per difference of machine, size or software.

:func:`comparison_warnings` checks a base run against a new one and says, in one line
each, what makes their comparison doubtful: different machines, a quick run against a
full one, other apache-tvm / apache-tvm-ffi / Python / benchkill versions, another malloc
or kernel, or other suites, uncommitted code, or the same clean commit on both sides (then
every verdict is the machine's noise), other instrument settings or test hooks behind
instruction counts.  The report prints them above its comparison; ``benchkill compare``
can print them above its table.  A check is a function of (base, new) in :data:`CHECKS`;
add one there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchkill.bench.model import (
    MALLOC_FIELDS,
    OS_FIELDS,
    PACKAGE_FIELDS,
    PYTHON_FIELDS,
    changed_fields,
)
from benchkill.results.store import Results

#: Machine fields that name a different machine; memory counts only beyond
#: :data:`MEMORY_TOLERANCE` (a virtual machine's visible memory moves by a few hundred KiB).
MACHINE_FIELDS = ("name", "hostname", "cpu_model", "cores", "memory_bytes")
MEMORY_TOLERANCE = 0.02


def _differs(field: str, a: object, b: object) -> bool:
    if a is None or b is None:
        return False
    if field == "memory_bytes":
        return abs(float(a) - float(b)) > MEMORY_TOLERANCE * max(float(a), float(b))
    return a != b


def _value(field: str, value: object) -> str:
    if field == "memory_bytes" and isinstance(value, int):
        return f"{value / 2**30:.1f} GiB"
    return repr(value) if isinstance(value, str) else str(value)


def different_machine(base: Results, new: Results) -> str | None:
    """The runs come from machines that differ in name, host, CPU, cores or memory."""
    a, b = base.machine, new.machine
    fields = [f for f in MACHINE_FIELDS if _differs(f, getattr(a, f), getattr(b, f))]
    if not fields:
        return None
    changes = ", ".join(
        f"{f.replace('_bytes', '')} {_value(f, getattr(a, f))} -> {_value(f, getattr(b, f))}"
        for f in fields
    )
    return f"different machines ({changes}): their times and peaks do not compare"


def quick_vs_full(base: Results, new: Results) -> str | None:
    """One run used ``--quick`` (small sizes, few repeats), the other did not."""
    if base.settings.quick == new.settings.quick:
        return None
    kind = {True: "quick", False: "full"}
    return (
        f"a {kind[base.settings.quick]} run (base) against a {kind[new.settings.quick]} run "
        "(new): sizes and repeats differ; the cases only one ran are listed as missing"
    )


def software(base: Results, new: Results) -> str | None:
    """Other apache-tvm, apache-tvm-ffi, Python or benchkill versions, another build of
    the Python, another malloc, or another operating system or kernel build."""
    fields = (
        *PACKAGE_FIELDS,
        *PYTHON_FIELDS,
        *MALLOC_FIELDS,
        *OS_FIELDS,
        ("benchkill", "benchkill_version"),
    )
    changes = [f"{n} {a} -> {b}" for n, a, b in changed_fields(fields, base.machine, new.machine)]
    return f"software changed: {', '.join(changes)}" if changes else None


def suites(base: Results, new: Results) -> str | None:
    """The runs ran different suites."""
    if set(base.settings.suites) == set(new.settings.suites):
        return None
    return (
        f"different suites: base ran {', '.join(base.settings.suites)}, new ran "
        f"{', '.join(new.settings.suites)}"
    )


def dirty(base: Results, new: Results) -> str | None:
    """A run measured code with uncommitted changes (its commit does not name it)."""
    sides = [side for side, r in (("base", base), ("new", new)) if r.machine.git_dirty]
    if not sides:
        return None
    return (
        f"uncommitted changes in the code of the {' and '.join(sides)} run: its commit does "
        "not name the code measured"
    )


def same_code(base: Results, new: Results) -> str | None:
    """Both runs measured the same clean commit: any verdict is the machine's noise, unless
    the machine, the software or the instrument changed (then it may be theirs)."""
    a, b = base.machine, new.machine
    if not a.git_commit or a.git_commit != b.git_commit or a.git_dirty or b.git_dirty:
        return None
    if any(check(base, new) for check in (different_machine, software, instrument)):
        return (
            f"both runs measured the same code (commit {a.git_commit}): a regression or "
            "improvement below comes from what the warnings above say changed, or is noise"
        )
    return (
        f"both runs measured the same code (commit {a.git_commit}): every regression or "
        "improvement below is noise of the machine"
    )


Check = Callable[[Results, Results], "str | None"]


def _instrument_settings(results: Results) -> list[dict]:
    """The distinct instrument settings of a run's records (``extra["instrument"]``)."""
    seen: list[dict] = []
    for r in results.records:
        settings = r.extra.get("instrument")
        if settings and settings not in seen:
            seen.append(settings)
    return seen


def _settings_changes(a: dict, b: dict) -> list[str]:
    flat_a = {**{k: v for k, v in a.items() if k != "env"}, **a.get("env", {})}
    flat_b = {**{k: v for k, v in b.items() if k != "env"}, **b.get("env", {})}
    return [
        f"{k} {flat_a.get(k, '-')} -> {flat_b.get(k, '-')}"
        for k in sorted(set(flat_a) | set(flat_b))
        if flat_a.get(k) != flat_b.get(k)
    ]


def instrument(base: Results, new: Results) -> str | None:
    """Instruction counts measured under other instrument settings (valgrind version,
    callgrind options, the child's pinned environment), or with test hooks set."""
    a, b = _instrument_settings(base), _instrument_settings(new)
    parts = []
    if a and b and a != b:
        parts.append("instrument settings differ: " + ", ".join(_settings_changes(a[0], b[-1])))
    hooks = {
        side: sorted(
            {f"{k}={v}" for r in res.records for k, v in r.extra.get("test_hooks", {}).items()}
        )
        for side, res in (("base", base), ("new", new))
    }
    if hooks["base"] != hooks["new"]:
        parts.append(
            "test hooks differ (a deliberately worse pass): "
            + "; ".join(f"{side} {' '.join(h) or 'none'}" for side, h in hooks.items())
        )
    return "; ".join(parts) if parts else None


#: The checks, in the order their warnings are printed.
CHECKS: tuple[Check, ...] = (
    different_machine,
    quick_vs_full,
    software,
    suites,
    dirty,
    same_code,
    instrument,
)


def comparison_warnings(base: Results, new: Results, checks: Sequence[Check] = CHECKS) -> list[str]:
    """One line per reason the comparison of ``base`` with ``new`` may mislead."""
    return [text for check in checks if (text := check(base, new))]
