"""``benchkill report RESULTS... [--out FILE.md]``: a Markdown summary with figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.cli import common_args as common
from benchkill.cli.outputs import (
    refuse_overwrite,
    shown,
    staged_directory,
    write_text,
)
from benchkill.results.loading import load_any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write a Markdown report of results files.  It leads with the answer: the speedup "
        "over TVM's pass per family and size, the memory kills save per workload, and every "
        "target met or not; then each suite's newest run compared with the one before it "
        "(with a warning when they come from different machines, sizes or software); then "
        "the figures (written to <FILE stem>_figures/ beside it); then every table, folded."
    )
    p.epilog = (
        "example:\n  benchkill report results/baseline-2core-vm/*.json results/<machine>/*.json"
    )
    common.add_results(p)
    common.add_out(p, "FILE", "the report to write", default=Path("report.md"))


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.markdown import figures_dir, render_report

    runs = [(path, load_any(path)) for path in args.results]
    refuse_overwrite(args.out, args.results, "the report")
    fig_dir = figures_dir(args.out)
    # the figures are staged, then linked into place: none replaces an existing file
    with staged_directory(fig_dir, args.results, "figures") as stage:
        text = render_report(runs, args.out, stage)
    write_text(args.out, text, args.results, "the report")
    print(shown(args.out))
    return 0
