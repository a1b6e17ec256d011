"""``benchkill targets RESULTS...``: the issues' target figures from results files."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.reporting.targets import format_targets
from benchkill.results.store import load


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "targets",
        help="print the target figures (pass time ratios, scaling exponents, VM memory)",
        description="Compute the target figures of the pass and VM suites from one or more "
        "benchkill results files (records of all files together) and print them as "
        "Markdown tables.",
    )
    p.add_argument("results", nargs="+", help="benchkill results files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    records = [r for path in args.results for r in load(Path(path)).records]
    print(format_targets(records))
    return 0
