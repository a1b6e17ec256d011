"""``benchkill compare BASE NEW``: verdict per benchmark; exit code 1 on a regression."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchkill.cli import args as types
from benchkill.reporting.formatting import comparison_table
from benchkill.reporting.verdicts import DEFAULT_ALPHA, compare, thresholds_text
from benchkill.reporting.warnings import comparison_warnings
from benchkill.results.asv_import import load_any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compare two results files.  A regression or improvement needs the ratio of medians "
        "beyond --factor and a two-sided Mann-Whitney U p-value below --alpha on the raw "
        "samples; instruction counts are exact (the ratio alone decides), peak bytes need an "
        "absolute change beyond max(1%, 512 KiB).  Exit code 1 on a regression or a newly "
        "failing case."
    )
    p.add_argument("base", type=Path, help="results file of the baseline")
    p.add_argument("new", type=Path, help="results file to check")
    p.add_argument(
        "--factor",
        type=types.factor,
        default=None,
        help="ratio that counts as a change (default per metric kind: "
        + thresholds_text(None).replace("%", "%%")
        + ")",
    )
    p.add_argument(
        "--alpha",
        type=types.alpha,
        default=DEFAULT_ALPHA,
        help=f"significance level of the U test (default {DEFAULT_ALPHA})",
    )
    p.add_argument(
        "--only",
        type=types.regex,
        metavar="REGEX",
        help="compare only benchmarks whose 'suite:name[params] metric' matches",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    base = load_any(args.base)
    new = load_any(args.new)
    report = compare(base, new, factor=args.factor, alpha=args.alpha, only=args.only)
    warnings = comparison_warnings(base, new)
    if args.json:
        print(json.dumps({**report.to_dict(), "warnings": warnings}, indent=1))
    else:
        for line in warnings:
            print(f"warning: {line}")
        print(comparison_table(report))
    return report.exit_code
