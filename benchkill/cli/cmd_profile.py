"""``benchkill profile FAMILY N``: CPU time per binding of each step of benchkill's pass."""

from __future__ import annotations

import argparse

from benchkill.errors import BenchkillError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "profile",
        help="CPU time per binding of each step of benchkill's pass on a generated module",
        description="Generate FAMILY with N ops and print the minimum CPU time per binding "
        "(microseconds, time.process_time) of each step of benchkill's KillAfterLastUse.",
    )
    p.add_argument("family")
    p.add_argument("n_ops", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from benchkill.inputs.families import count_bindings, generate
    from benchkill.passes.profile import profile_function

    if args.repeats < 1:
        raise BenchkillError("--repeats must be at least 1")
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
