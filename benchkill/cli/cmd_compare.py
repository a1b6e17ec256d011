"""``benchkill compare BASE NEW``: verdict per benchmark; exit code 1 on a regression."""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

from benchkill.reporting.verdicts import (
    DEFAULT_ALPHA,
    DEFAULT_FACTOR,
    CompareReport,
    compare,
    format_ratio,
    format_value,
    load_any,
)


def parse_factor(text: str) -> float:
    """argparse type: a finite ratio above 1 (1.10 = a change of 10%)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid factor {text!r}: not a number") from None
    if not math.isfinite(value) or value <= 1.0:
        raise argparse.ArgumentTypeError(f"invalid factor {text!r}: must be a number above 1")
    return value


def parse_alpha(text: str) -> float:
    """argparse type: a significance level strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid alpha {text!r}: not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"invalid alpha {text!r}: must be between 0 and 1")
    return value


def parse_regex(text: str) -> re.Pattern[str]:
    """argparse type: a Python regular expression."""
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"invalid regular expression {text!r}: {exc}") from None


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two results files (benchkill or asv)",
        description="Compare two results files.  A regression or improvement needs the ratio "
        "of medians beyond --factor and a two-sided Mann-Whitney U p-value below --alpha on "
        "the raw samples.  Exit code 1 on a regression or a newly failing case.",
    )
    p.add_argument("base", type=Path, help="results file of the baseline")
    p.add_argument("new", type=Path, help="results file to check")
    p.add_argument(
        "--factor",
        type=parse_factor,
        default=DEFAULT_FACTOR,
        help=f"ratio that counts as a change (default {DEFAULT_FACTOR})",
    )
    p.add_argument(
        "--alpha",
        type=parse_alpha,
        default=DEFAULT_ALPHA,
        help=f"significance level of the U test (default {DEFAULT_ALPHA})",
    )
    p.add_argument(
        "--only",
        type=parse_regex,
        metavar="REGEX",
        help="compare only benchmarks whose 'suite:name[params] metric' matches",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def format_table(report: CompareReport) -> str:
    """The comparison as an aligned text table with a summary line."""
    header = ("benchmark", "base", "new", "ratio", "verdict", "notes")
    rows = [
        (
            c.label,
            format_value(c.base.median if c.base else None, c.unit),
            format_value(c.new.median if c.new else None, c.unit),
            format_ratio(c.ratio),
            c.verdict,
            "; ".join(c.notes),
        )
        for c in report.comparisons
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [
            row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i])
            for i in range(len(widths))
        ]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    counts = ", ".join(
        f"{report.count(v)} {v}" for v in dict.fromkeys(c.verdict for c in report.comparisons)
    )
    lines.append(f"\n{counts} (factor {report.factor:g}, alpha {report.alpha:g})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    base = load_any(args.base)
    new = load_any(args.new)
    report = compare(base, new, factor=args.factor, alpha=args.alpha, only=args.only)
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        print(format_table(report))
    return report.exit_code
