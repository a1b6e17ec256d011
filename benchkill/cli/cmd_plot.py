"""``benchkill plot RESULTS... [--out DIR]``: figures as PNG and SVG files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkill.cli import common_args as common
from benchkill.cli.outputs import shown, staged_directory
from benchkill.errors import MeasurementError
from benchkill.results.loading import load_any

#: What exit code 3 means here.
NOT_MEASURED = "nothing to draw (no records a figure needs), or a figure could not be written"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Draw the figures the results have records for, as PNG (1000 pixels wide) and SVG, "
        "and print their paths: pass time vs bindings per family, the speedup TVM / "
        "benchkill, VM peak memory and run time per workload and kill variant, and a memory "
        "timeline per workload; with several files also the history of each metric in "
        "commit order.  Each figure is drawn from the newest file that has its records; a "
        "figure without records is skipped with a note."
    )
    p.epilog = "example:\n  benchkill plot results/baseline-2core-vm/*.json --out figures"
    common.add_results(p)
    common.add_out(p, "DIR", "directory of the figures", default=Path("figures"))


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.plot import plot_results

    runs = [load_any(path) for path in args.results]
    with staged_directory(args.out, args.results) as stage:  # moved into --out when done
        output = plot_results(runs, stage)
        if not output.paths:
            reasons = "; ".join(note.removeprefix("skipped ") for note in output.notes)
            raise MeasurementError(f"nothing to draw: {reasons}")
    for path in output.paths:
        print(shown(args.out / path.name))
    for note in output.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0
