"""``benchkill fuzz``: differential fuzzing of benchkill's KillAfterLastUse against TVM's."""

from __future__ import annotations

import argparse

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.cli import deprecation
from benchkill.errors import BenchkillError

#: What exit code 1 means here.
BAD_ANSWER = (
    "benchkill's output differs from TVM's or verify_kills rejects it (the minimal "
    "failing example is printed)"
)

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
        "optionally build and run random high-level programs with every kill variant."
    )
    p.epilog = (
        "Time on 2 cores: 1,000 lowered modules took 17 s; 20,000 lowered modules and 30 "
        "buildable programs took 7 minutes.\n\n"
        "example:\n"
        "  benchkill fuzz --repeats 1000 --seed 7 --buildable 3"
    )
    repeats = common.add_repeats(p, 1000, "lowered modules to draw and check")
    deprecation.alias(p, repeats, "--examples")
    common.add_seed(p, "hypothesis seed")
    p.add_argument(
        "--max-statements",
        type=types.positive_int,
        default=30,
        help="most statements per drawn function",
    )
    p.add_argument(
        "--buildable",
        type=types.non_negative_int,
        default=0,
        help="high-level programs to build and run with each kill variant in both "
        "exec modes (seconds each)",
    )
    common.add_shard(p, "module and program (repeats and --buildable split; seed S+K-1)")
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
    from benchkill.bench.sharding import share

    options = {option: getattr(args, option) for option in KNOWN_FAILURE_FLAGS}
    result = run_campaign(
        share(args.repeats, args.shard),
        seed_value=args.seed + (args.shard[0] - 1 if args.shard else 0),
        max_statements=args.max_statements,
        buildable=share(args.buildable, args.shard),
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
