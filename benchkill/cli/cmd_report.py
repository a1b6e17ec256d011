"""``benchkill report RESULTS... [--out FILE.md]``: a Markdown summary with figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.reporting.markdown import write_report
from benchkill.reporting.verdicts import load_any


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write a Markdown report of results files",
        description="Write a Markdown report: runs, tables of the newest run, failures, the "
        "comparison of the two newest runs, and figures (in <FILE stem>_figures/).",
    )
    p.add_argument("results", type=Path, nargs="+", help="benchkill or asv results files")
    p.add_argument("--out", type=Path, default=Path("report.md"), help="default report.md")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    runs = [(path, load_any(path)) for path in args.results]
    print(write_report(runs, args.out))
    return 0
