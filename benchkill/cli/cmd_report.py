"""``benchkill report RESULTS... [--out FILE.md]``: a Markdown summary with figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.cli.outputs import check_directory, refuse_overwrite, shown, writing
from benchkill.results.asv_import import load_any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write a Markdown report: runs, tables of the newest run, failures, the comparison "
        "of the two newest runs, and figures (in <FILE stem>_figures/)."
    )
    p.add_argument("results", type=Path, nargs="+", help="benchkill or asv results files")
    p.add_argument("--out", type=Path, default=Path("report.md"), help="default report.md")


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.markdown import write_report

    runs = [(path, load_any(path)) for path in args.results]
    refuse_overwrite(args.out, args.results, "the report")
    check_directory(args.out.parent / f"{args.out.stem}_figures", args.results, "figures")
    with writing(args.out):
        out = write_report(runs, args.out)
    print(shown(out))
    return 0
