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
        "chain takes a few seconds.  --floor also times, in interleaved rounds (CPU time, "
        "the minimum of --repeats), TVM's pass, benchkill's pass and the floor: only the FFI "
        "work no exact Python pass can skip on this module (reading every binding, rebuilding "
        "and re-inferring each call whose arguments canonicalization substitutes, making the "
        "kills and the blocks).\n\n"
        "examples:\n"
        "  benchkill profile chain 10000\n"
        "  benchkill profile model 49 --floor --repeats 15"
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
    p.add_argument(
        "--floor",
        action="store_true",
        help="also time TVM's pass, benchkill's pass and the floor side by side",
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
    if args.floor:
        _print_floor(mod, bindings, args.repeats)
    return 0


def _print_floor(mod, bindings: int, rounds: int) -> None:
    from benchkill.bench.suites.pass_suite import time_floor
    from benchkill.passes.canonicalize import Unsupported
    from benchkill.passes.last_use import NeedsTVMCanonicalization
    from benchkill.passes.profile import floor_work

    try:
        work = floor_work(mod["main"])
    except (NeedsTVMCanonicalization, Unsupported):
        print("floor: not measured (the function goes to the fallback, TVM's pass)")
        return
    best = time_floor(mod, work, rounds)
    print(
        f"floor: {work.trivial} bindings removed by canonicalization, {len(work.rebuilt)} "
        f"calls re-inferred, {len(work.kills)} kills; CPU time, min of {rounds} "
        "interleaved rounds:"
    )
    for name, seconds in best.items():
        print(f"  {name:13s} {seconds * 1e3:9.3f} ms {seconds / bindings * 1e6:7.2f} us/binding")
    tvm, ours, floor = best["tvm"], best["benchkill"], best["floor"]
    print(
        f"  benchkill / tvm {ours / tvm:.3f}, floor / tvm {floor / tvm:.3f}, "
        f"benchkill / floor {ours / floor:.2f}"
    )
