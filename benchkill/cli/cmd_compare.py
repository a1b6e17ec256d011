"""``benchkill compare BASE NEW``: verdict per benchmark; exit code 1 on a regression."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.cli.outputs import shown
from benchkill.reporting.formatting import code_text, comparison_markdown, comparison_table
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.verdicts import DEFAULT_ALPHA, thresholds_text
from benchkill.reporting.warnings import comparison_warnings
from benchkill.results.loading import load_any
from benchkill.results.store import Results

#: What exit code 1 means here.
BAD_ANSWER = "a regression or a newly failing case"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compare two results files (benchkill's, asv's .asv/results/<machine>/*.json, or "
        "pytest-benchmark's .benchmarks/<machine>/*.json saved with --benchmark-save-data), "
        "measurement by measurement.  A regression or improvement needs the ratio of the "
        "medians beyond --factor and a two-sided Mann-Whitney U p-value below --alpha on "
        "the raw samples; instruction counts are exact (the ratio alone decides), peak "
        "bytes need an absolute change beyond max(1%, 512 KiB); time and bytes are better "
        "lower, speedups higher.  A regression exits with code 1, so CI can gate on it."
    )
    p.epilog = (
        "verdicts: regression, improvement, no change, noisy (IQR above 10% of the "
        "median), insufficient samples (too few for --alpha), failed, missing; exact: "
        "both sides' samples identical, no test needed.  On a shared machine absolute "
        "times move between runs; speedup_vs_tvm and time_over_floor (benchkill's time "
        "over the floor's), measured side by side, move less, and instruction counts not "
        'at all (README, "trust": time_over_floor gave no false alarm where the CPU times '
        "gave 7 in 10).  benchkill's pass times note how far their case's floor moved "
        "where both runs timed it (floor moved R): a regression that the floor shows too "
        "is the machine's.\n\n"
        "example:\n"
        "  benchkill compare results/baseline-2core-amd/20261203T113705Z-e85a277.json \\\n"
        "      results/<machine>/<new>.json --only 'speedup_vs_tvm|time_over_floor'"
    )
    p.add_argument("base", type=Path, help="results file of the baseline")
    p.add_argument("new", type=Path, help="results file to check against it")
    common.add_factor(p, thresholds_text(None))
    common.add_alpha(p, DEFAULT_ALPHA)
    p.add_argument(
        "--only",
        type=types.regex,
        metavar="REGEX",
        help="compare only measurements whose 'suite:name[params] metric' matches (default: all)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text table, JSON, or a Markdown table for a pull request or $GITHUB_STEP_SUMMARY",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")
    common.add_policy(p)


def mixed_code_warnings(files: list[tuple[Path, Results]]) -> list[str]:
    """One line per file whose records were measured by more than one commit (a run
    resumed with ``--allow-code-change``)."""
    return [
        f"{shown(path)} holds records measured by different code "
        f"({code_text(results).removeprefix('mixed: ')})"
        for path, results in files
        if len(results.code_states) > 1
    ]


def run(args: argparse.Namespace) -> int:
    base = load_any(args.base)
    new = load_any(args.new)
    policy = common.policy_of(args)
    report = compare(base, new, factor=args.factor, alpha=args.alpha, only=args.only, policy=policy)
    warnings = mixed_code_warnings([(args.base, base), (args.new, new)])
    warnings += comparison_warnings(base, new)
    if args.json or args.format == "json":
        print(json.dumps({**report.to_dict(), "warnings": warnings}, indent=1))
    elif args.format == "markdown":
        print(comparison_markdown(report, warnings), end="")
    else:
        for line in warnings:
            print(f"warning: {line}")
        print(comparison_table(report))
    return report.exit_code
