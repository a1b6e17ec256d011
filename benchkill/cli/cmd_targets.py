"""``benchkill targets RESULTS...``: the issues' target figures from results files."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.reporting.targets import format_targets
from benchkill.results.store import load


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compute the target figures of the pass and VM suites from one or more benchkill "
        "results files (records of all files together) and print them as Markdown tables, "
        "each target with whether it is met."
    )
    p.add_argument("results", type=Path, nargs="+", help="benchkill results files")


def run(args: argparse.Namespace) -> int:
    records = [r for path in args.results for r in load(path).records]
    text = format_targets(records)
    if not text:
        raise BenchkillError("no successful pass or vm records to compute target figures from")
    print(text)
    return 0
