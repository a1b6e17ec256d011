"""``benchkill profile FAMILY N``: CPU time per binding of each step of benchkill's pass."""

from __future__ import annotations

import argparse

from benchkill.cli import args as types


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Generate FAMILY with N ops and print the minimum CPU time per binding "
        "(microseconds, time.process_time) of each step of benchkill's KillAfterLastUse."
    )
    p.epilog = (
        "Steps: the sweep (last uses, canonicalization planned on the way), the plan, the "
        "rebuild, and freeing the sweep's tables as the pass returns; a function the sweep "
        "hands to the fallback (TVM's pass) has the sweep and the fallback.  A 10,000-op "
        "chain takes a few seconds.\n\n"
        "example:\n"
        "  benchkill profile chain 10000"
    )
    p.add_argument(
        "family", metavar="FAMILY", help="a family of benchkill.generate (see benchkill generate)"
    )
    p.add_argument(
        "n_ops", metavar="N", type=types.positive_int, help="number of lowered operators"
    )
    p.add_argument("--seed", type=types.non_negative_int, default=0, help="random seed")
    p.add_argument(
        "--repeats",
        type=types.positive_int,
        default=3,
        help="runs of each step; the minimum is printed",
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.inputs.families import count_bindings, generate
    from benchkill.passes.profile import profile_function

    mod = generate(args.family, args.n_ops, args.seed)
    bindings = count_bindings(mod)
    profile = profile_function(mod["main"], bindings, repeats=args.repeats)
    steps = profile.per_binding_us()
    print(
        f"{args.family}, {bindings} bindings, CPU microseconds per binding (min of {args.repeats}):"
    )
    for step, us in steps.items():
        print(f"  {step:13s} {us:7.2f}")
    print(f"  {'total':13s} {sum(steps.values()):7.2f}")
    return 0
