"""``benchkill targets RESULTS...``: the issues' target figures from results files."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.reporting.formatting import run_line
from benchkill.reporting.targets import format_targets
from benchkill.results.store import load


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compute the target figures of the pass and VM suites from one or more benchkill "
        "results files (records of all files together) and print them as Markdown tables, "
        "each target with whether it is met: benchkill / TVM time at 3,000 and 200,000 "
        "bindings, naive / benchkill at 30,000 and benchkill's scaling exponent (chain "
        "family), and per VM workload the peak over the liveness bound and the peak without "
        "kills over the peak with them.  Sizes a run did not measure show as n/a (a --quick "
        "run has only the 3,000-binding one).  Above the tables, one line per file says what "
        "measured it (CPU, Python and its build, packages): the ratios depend on both."
    )
    p.epilog = "example:\n  benchkill targets results/baseline-2core-vm/*.json"
    p.add_argument("results", type=Path, nargs="+", help="benchkill results files")


def run(args: argparse.Namespace) -> int:
    runs = [(path, load(path)) for path in args.results]
    text = format_targets([r for _, results in runs for r in results.records])
    if not text:
        raise BenchkillError("no successful pass or vm records to compute target figures from")
    # the ratios depend on the CPU and the interpreter's build (README "The interpreter")
    print("\n".join(run_line(path, r) for path, r in runs) + "\n")
    print(text)
    return 0
