"""``benchkill trust``: how often compare's verdicts come out right (A/A and A/B runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli.outputs import check_directory, writing
from benchkill.reporting.verdicts import DEFAULT_ALPHA


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run TRIALS quick pass-suite runs of the code as it is (A) and as many with "
        "BENCHKILL_INJECT_SLOWDOWN=SLOWDOWN (B), alternating, into DIR (existing runs there "
        "are reused), then count how often compare reports a regression: A/A (each A run "
        "against the next) should never, A/B (each A run against its B run) always."
    )
    p.add_argument("--trials", type=types.int_at_least(2), default=10, help="default 10")
    p.add_argument(
        "--slowdown",
        type=types.positive_float,
        default=0.10,
        help="extra work of the B runs, a fraction of the pass's time (default 0.10)",
    )
    p.add_argument("--dir", default="trust-runs", help="where the runs go (default trust-runs)")
    p.add_argument("--factor", type=types.factor, default=1.05, help="default 1.05")
    p.add_argument("--alpha", type=types.alpha, default=DEFAULT_ALPHA)


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.trust import measure

    directory = Path(args.dir)
    check_directory(directory, what="runs")
    with writing(directory):
        rows = measure(args.trials, args.slowdown, directory, args.factor, args.alpha)
    print(f"factor {args.factor}, alpha {args.alpha}, slowdown {args.slowdown:.0%}:")
    print("| records judged | A/A false alarms | A/B detections |")
    print("|---|---|---|")
    for t in rows:
        print(f"| {t.selection} | {t.false_alarms}/{t.aa_trials} | {t.detections}/{t.ab_trials} |")
    return 0
