"""Per-case policy from ``pyproject.toml``: thresholds and acknowledged regressions.

A team states in its ``pyproject.toml`` what counts as a change for a case and which
regressions it has accepted (pytest-benchmark's users ask for per-benchmark thresholds,
issue #219; Bencher's, #520)::

    [[tool.benchkill.thresholds]]
    case = "pass:chain[*]"        # a case label, * and ? as wildcards
    factor = 1.2                  # time and instructions (ratio of medians)
    alpha = 0.01                  # the U test's significance level (times)
    bytes_tolerance = 1048576     # bytes: the absolute change that counts

    [[tool.benchkill.acknowledged]]
    case = "pass:diamond[*]"
    metric = "pass_instructions"
    commit = "0123abc"            # the commit whose change is accepted (a prefix, 7+ hex)
    reason = "the canonicalize step now checks struct info"

Patterns match the whole case label ``suite:name[k=v,...]`` (what ``compare --only``
searches, without the metric); ``*`` is any text, ``?`` one character and nothing else
is special, so labels' brackets need no escaping.  The first threshold entry whose
pattern matches a case wins, and it wins over ``--factor``/``--alpha`` (a case's own
rule is more specific than a run's).  An acknowledged regression is reported with the
verdict ``acknowledged`` and its reason and does not fail ``compare`` or ``history``.

The file is read with the standard ``tomllib`` (``tomli`` before Python 3.11).  Any
malformed entry is a :class:`~benchkill.errors.BenchkillError` naming the key, so the
command exits with 2.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchkill.errors import BenchkillError

if TYPE_CHECKING:
    pass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Where the policy lives in pyproject.toml.
TABLE = "tool.benchkill"
THRESHOLD_KEYS = {"case", "factor", "alpha", "bytes_tolerance"}
ACK_KEYS = {"case", "metric", "commit", "reason"}
_COMMIT = re.compile(r"[0-9a-f]{7,40}")


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """The regex of a case pattern: ``*`` any text, ``?`` one character, the rest literal."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


@dataclass(frozen=True)
class Threshold:
    """What counts as a change for the cases ``pattern`` matches (None: the default)."""

    pattern: str
    factor: float | None = None
    alpha: float | None = None
    bytes_tolerance: float | None = None

    def matches(self, case: str) -> bool:
        return pattern_regex(self.pattern).match(case) is not None


@dataclass(frozen=True)
class Acknowledged:
    """A regression the team accepted: the change of ``metric`` at ``commit``."""

    pattern: str
    metric: str
    commit: str
    reason: str

    def matches(self, case: str, metric: str, commit: str | None) -> bool:
        if metric != self.metric or not commit:
            return False
        short = min(len(commit), len(self.commit))
        return (
            commit[:short].lower() == self.commit[:short].lower()
            and pattern_regex(self.pattern).match(case) is not None
        )


@dataclass(frozen=True)
class Policy:
    """The thresholds and acknowledged regressions of one project (empty: none)."""

    thresholds: tuple[Threshold, ...] = ()
    acknowledged: tuple[Acknowledged, ...] = ()
    source: str | None = None  # the file it was read from

    def threshold(self, case: str) -> Threshold | None:
        """The first threshold entry matching ``case``, or None."""
        return next((t for t in self.thresholds if t.matches(case)), None)

    def acknowledgement(self, case: str, metric: str, commit: str | None) -> Acknowledged | None:
        """The acknowledged regression of ``case``'s ``metric`` at ``commit``, or None."""
        return next((a for a in self.acknowledged if a.matches(case, metric, commit)), None)


NO_POLICY = Policy()


def _where(key: str, index: int | None = None, field: str | None = None) -> str:
    text = f"{TABLE}.{key}"
    if index is not None:
        text += f"[{index}]"
    return f"{text}.{field}" if field else text


def _number(entry: dict[str, Any], key: str, where: str, low: float, high: float | None):
    if key not in entry:
        return None
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BenchkillError(f"{where}: must be a number, not {value!r}")
    if value < low or (high is not None and value >= high) or (low > 0 and value == 0):
        bound = f"in [{low:g}, {high:g})" if high is not None else f">= {low:g}"
        raise BenchkillError(f"{where}: must be {bound}, not {value!r}")
    return float(value)


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BenchkillError(f"{where}: a non-empty string is required, not {value!r}")
    return value


def _entries(table: dict[str, Any], key: str, allowed: set[str]) -> list[dict[str, Any]]:
    entries = table.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise BenchkillError(f"{_where(key)}: must be an array of tables ([[{TABLE}.{key}]])")
    for i, entry in enumerate(entries):
        unknown = sorted(set(entry) - allowed)
        if unknown:
            raise BenchkillError(
                f"{_where(key, i, unknown[0])}: unknown key (known: {', '.join(sorted(allowed))})"
            )
    return entries


def policy_from_table(table: Any, source: str | None = None) -> Policy:
    """The :class:`Policy` of a parsed ``[tool.benchkill]`` table."""
    if not isinstance(table, dict):
        raise BenchkillError(f"{TABLE}: must be a table")
    unknown = sorted(set(table) - {"thresholds", "acknowledged"})
    if unknown:
        raise BenchkillError(f"{_where(unknown[0])}: unknown key (known: thresholds, acknowledged)")
    thresholds = []
    for i, e in enumerate(_entries(table, "thresholds", THRESHOLD_KEYS)):
        w = lambda f, i=i: _where("thresholds", i, f)  # noqa: E731
        t = Threshold(
            _text(e, "case", w("case")),
            _number(e, "factor", w("factor"), 1.0, None),
            _number(e, "alpha", w("alpha"), 0.0, 1.0),
            _number(e, "bytes_tolerance", w("bytes_tolerance"), 0.0, None),
        )
        if t.factor is not None and t.factor <= 1.0:
            raise BenchkillError(f"{w('factor')}: must be above 1, not {t.factor:g}")
        if t.alpha is not None and t.alpha <= 0:
            raise BenchkillError(f"{w('alpha')}: must be in (0, 1), not {t.alpha:g}")
        thresholds.append(t)
    acknowledged = []
    for i, e in enumerate(_entries(table, "acknowledged", ACK_KEYS)):
        w = lambda f, i=i: _where("acknowledged", i, f)  # noqa: E731
        commit = _text(e, "commit", w("commit")).strip()
        if not _COMMIT.fullmatch(commit.lower()):
            raise BenchkillError(f"{w('commit')}: must be 7 to 40 hex digits, not {commit!r}")
        acknowledged.append(
            Acknowledged(
                _text(e, "case", w("case")),
                _text(e, "metric", w("metric")),
                commit,
                _text(e, "reason", w("reason")),
            )
        )
    return Policy(tuple(thresholds), tuple(acknowledged), source)


def load_policy(path: Path) -> Policy:
    """The policy in ``path`` (a pyproject.toml); no ``[tool.benchkill]``: no policy."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise BenchkillError(f"{path}: no such policy file") from None
    except IsADirectoryError:
        raise BenchkillError(f"{path}: is a directory, not a pyproject.toml") from None
    except OSError as exc:
        raise BenchkillError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BenchkillError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("benchkill") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return Policy(source=str(path))
    try:
        return policy_from_table(table, str(path))
    except BenchkillError as exc:
        raise BenchkillError(f"{path}: {exc}") from None


def find_policy(start: Path | None = None) -> Policy:
    """The policy of the ``pyproject.toml`` in ``start`` (default: the working directory)
    or its nearest parent that has one; none found: :data:`NO_POLICY`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return load_policy(candidate)
    return NO_POLICY
