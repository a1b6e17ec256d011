"""``benchkill fuzz``: differential fuzzing of benchkill's KillAfterLastUse against TVM's."""

from __future__ import annotations

import argparse

from benchkill.cli import args as types
from benchkill.errors import BenchkillError

# The generator options that reach known failures (benchkill.fuzz.KNOWN_FAILURES), named
# here so that building the CLI does not import hypothesis, a test-only dependency.
KNOWN_FAILURE_FLAGS = {
    "string_vars": "bind R.str values to variables (TVM's pass kills them)",
    "branch_kills": "pre-existing kills of outer values inside If branches",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Draw random lowered Relax functions (hypothesis), check that benchkill's "
        "KillAfterLastUse equals TVM's and that verify_kills accepts its output in both modes; "
        "optionally build and run random high-level programs with every kill variant. "
        "Exit 0 when every example passes, 1 with the minimal failing example."
    )
    p.add_argument(
        "--examples",
        type=types.positive_int,
        default=1000,
        help="lowered modules to check (default 1000)",
    )
    p.add_argument(
        "--seed", type=types.non_negative_int, default=0, help="hypothesis seed (default 0)"
    )
    p.add_argument(
        "--max-statements",
        type=types.positive_int,
        default=30,
        help="statements per drawn function (default 30)",
    )
    p.add_argument(
        "--buildable",
        type=types.non_negative_int,
        default=0,
        help="high-level programs to build and run with each kill variant in both "
        "exec modes (seconds each; default 0)",
    )
    for option, text in KNOWN_FAILURE_FLAGS.items():
        p.add_argument(
            "--" + option.replace("_", "-"),
            action="store_true",
            help=f"reach a known failure: {text}",
        )


def run(args: argparse.Namespace) -> int:
    try:
        from benchkill.fuzz.campaign import run_campaign
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise BenchkillError(
            "benchkill fuzz needs hypothesis: pip install 'benchkill[test]'"
        ) from None
    options = {option: getattr(args, option) for option in KNOWN_FAILURE_FLAGS}
    result = run_campaign(
        args.examples,
        seed_value=args.seed,
        max_statements=args.max_statements,
        buildable=args.buildable,
        **options,
    )
    ran = f"{result.examples} lowered modules"
    if args.buildable:
        ran += f", {result.buildable} buildable programs"
    summary = f"fuzz: {ran} (seed {result.seed}) in {result.seconds:.1f} s"
    if result.ok:
        print(f"{summary}: no mismatch")
        return 0
    print(f"{summary}: MISMATCH")
    print(result.failure)
    print("minimal example:")
    print(result.reproducer)
    return 1
