"""``benchkill trust``: how often compare's verdicts come out right (A/A and A/B runs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.cli import deprecation
from benchkill.cli.outputs import check_directory, writing
from benchkill.reporting.verdicts import DEFAULT_ALPHA

METRICS = ("instructions", "memory", "time")
#: What exit code 3 means here.
NOT_MEASURED = "a run of benchkill run failed (its error line is printed)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run N+1 runs of the code as it is (A) and N with a test hook set (B), alternating "
        "(N: --repeats), into the --out directory (existing runs there are reused), then "
        "count how often compare reports a regression: A/A (each A run against the next) "
        "should never, A/B (each A run against the B run after it) always.  --metric "
        "instructions: quick pass-suite instruction counts, B with "
        "BENCHKILL_INJECT_SLOWDOWN; memory: quick vm suite, B with "
        "BENCHKILL_INJECT_MISSED_KILLS; time: quick pass suite, B with "
        "BENCHKILL_INJECT_SLOWDOWN (--hook sets the value)."
    )
    p.epilog = "example:\n  benchkill trust --metric time --repeats 20 --hook 0.10 --hook 0.25"
    p.add_argument(
        "--metric",
        choices=METRICS,
        default="time",
        help="the metric whose alerts are judged",
    )
    repeats = common.add_repeats(p, 10, "B runs, and A runs one more", minimum=2)
    deprecation.alias(p, repeats, "--trials")
    hook = p.add_argument(
        "--hook",
        type=types.positive_float,
        action="append",
        metavar="VALUE",
        help="the hook's value in the B runs, repeat for several (default: 0.01 for "
        "instructions, 0.25 for memory, 0.10 for time)",
    )
    deprecation.alias(p, hook, "--slowdown")
    out = common.add_out(p, "DIR", "where the runs go (default: trust-runs/<metric>)")
    deprecation.alias(p, out, "--dir")
    common.add_factor(p, "compare's")
    common.add_alpha(p, DEFAULT_ALPHA)


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.trust import PLANS, measure

    plan = PLANS[args.metric]
    values = args.hook or [plan.default]
    directory = Path(args.out or f"trust-runs/{args.metric}")
    check_directory(directory, what="runs")
    with writing(directory):
        rows = measure(
            args.repeats,
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
