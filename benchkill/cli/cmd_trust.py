"""``benchkill trust``: how often compare's verdicts come out right (A/A and A/B runs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli.outputs import check_directory, writing
from benchkill.reporting.verdicts import DEFAULT_ALPHA

METRICS = ("instructions", "memory", "time")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run TRIALS+1 runs of the code as it is (A) and TRIALS with a test hook set (B), "
        "alternating, into DIR (existing runs there are reused), then count how often "
        "compare reports a regression: A/A (each A run against the next) should never, A/B "
        "(each A run against the B run after it) always.  --metric instructions: quick "
        "pass-suite instruction counts, B with BENCHKILL_INJECT_SLOWDOWN (default 0.01); "
        "memory: quick vm suite, B with BENCHKILL_INJECT_MISSED_KILLS (default 0.25); "
        "time: quick pass suite, B with BENCHKILL_INJECT_SLOWDOWN (default 0.10)."
    )
    p.add_argument(
        "--metric",
        choices=METRICS,
        default="time",
        help="the metric whose alerts are judged (default: time)",
    )
    p.add_argument(
        "--trials",
        type=types.int_at_least(2),
        default=10,
        help="B runs, and A runs one more (default: 10)",
    )
    p.add_argument(
        "--hook",
        type=types.positive_float,
        action="append",
        metavar="VALUE",
        help="the hook's value in the B runs, repeat for several (default: 0.01 for "
        "instructions, 0.25 for memory, 0.10 for time)",
    )
    p.add_argument(
        "--slowdown",
        type=types.positive_float,
        action="append",
        help="same as --hook (default: none)",
    )
    p.add_argument("--dir", help="where the runs go (default trust-runs/<metric>)")
    p.add_argument(
        "--factor",
        type=types.factor,
        default=None,
        help="threshold of a change (default: compare's, per metric kind)",
    )
    p.add_argument(
        "--alpha",
        type=types.alpha,
        default=DEFAULT_ALPHA,
        help="significance level of compare's Mann-Whitney U test (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.trust import PLANS, measure

    plan = PLANS[args.metric]
    values = (args.hook or []) + (args.slowdown or []) or [plan.default]
    directory = Path(args.dir or f"trust-runs/{args.metric}")
    check_directory(directory, what="runs")
    with writing(directory):
        rows = measure(
            args.trials,
            values,
            directory,
            args.factor,
            args.alpha,
            plan,
            progress=lambda text: print(text, file=sys.stderr, flush=True),
        )
    factor = "compare's defaults" if args.factor is None else f"factor {args.factor:g}"
    print(f"{args.metric}: {factor}, alpha {args.alpha:g}, runs in {directory}:")
    print(f"| records judged | A/A false alarms | A/B detections | {plan.hook} |")
    print("|---|---|---|---|")
    for t in rows:
        print(
            f"| {t.selection} | {t.false_alarms}/{t.aa_trials} | "
            f"{t.detections}/{t.ab_trials} | {t.value:g} |"
        )
    return 0
