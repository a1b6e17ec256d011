"""``benchkill trust``: how often compare's verdicts come out right (A/A and A/B runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill.cli.cmd_compare import parse_alpha, parse_factor
from benchkill.reporting.verdicts import DEFAULT_ALPHA


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "trust",
        help="measure false alarms (A/A) and detections (A/B, slowed pass) of compare",
        description="Run TRIALS quick pass-suite runs of the code as it is (A) and as many "
        "with BENCHKILL_INJECT_SLOWDOWN=SLOWDOWN (B), alternating, into DIR (existing runs "
        "there are reused), then count how often compare reports a regression: A/A "
        "(each A run against the next) should never, A/B (each A run against its B run) "
        "always.",
    )
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--slowdown", type=float, default=0.10)
    p.add_argument("--dir", default="trust-runs", help="where the runs go (default trust-runs)")
    p.add_argument("--factor", type=parse_factor, default=1.05)
    p.add_argument("--alpha", type=parse_alpha, default=DEFAULT_ALPHA)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from benchkill.reporting.trust import measure

    rows = measure(args.trials, args.slowdown, Path(args.dir), args.factor, args.alpha)
    print(f"factor {args.factor}, alpha {args.alpha}, slowdown {args.slowdown:.0%}:")
    print("| records judged | A/A false alarms | A/B detections |")
    print("|---|---|---|")
    for t in rows:
        print(f"| {t.selection} | {t.false_alarms}/{t.aa_trials} | {t.detections}/{t.ab_trials} |")
    return 0
