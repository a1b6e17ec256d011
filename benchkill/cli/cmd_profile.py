"""``benchkill profile FAMILY N`` (or ``--module FILE``): CPU time per binding of each step of
benchkill's pass."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from benchkill.cli import args as types
from benchkill.errors import BenchkillError, one_line

if TYPE_CHECKING:
    import tvm


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Generate FAMILY with N ops (or read a lowered module with --module) and print the "
        "minimum CPU time per binding (microseconds, time.process_time) of each step of "
        "benchkill's KillAfterLastUse; with several N, also the scaling exponent of each "
        "timing over the sizes."
    )
    p.epilog = (
        "Steps: the sweep (last uses, canonicalization planned on the way), the plan, the "
        "rebuild, and freeing the sweep's tables as the pass returns; a function the sweep "
        "hands to the fallback (TVM's pass) has the sweep and the fallback.  A 10,000-op "
        "chain takes a few seconds.  --floor also times, in interleaved rounds (CPU time, "
        "the minimum of --repeats), TVM's pass, benchkill's pass and the floor: only the FFI "
        "work no exact Python pass can skip on this module (reading every binding, rebuilding "
        "and re-inferring each call whose arguments canonicalization substitutes, making the "
        "kills and the blocks), and TVM's C++ free-variable analysis of the function "
        "(relax.analysis.free_vars, 'visit': one C++ visit of every binding and use with a "
        "hash set, the shape of a last-use analysis with no Python in it).  With several "
        "N, the scaling exponent of each (least-squares slope of log time against log "
        "bindings) closes the output.\n\n"
        "examples:\n"
        "  benchkill profile chain 10000\n"
        "  benchkill profile model 49 --floor --repeats 15\n"
        "  benchkill profile chain 1000 10000 66667 200000 --floor --repeats 3  # 3k-600k\n"
        "  benchkill profile --module kill_input.py --func main --floor   # your own IR\n"
        "  benchkill profile --module model.py --lower --floor   # high-level IR"
    )
    p.add_argument(
        "family",
        metavar="FAMILY",
        nargs="?",
        help="a family of benchkill.generate (see benchkill generate); not with --module",
    )
    p.add_argument(
        "n_ops",
        metavar="N",
        type=types.positive_int,
        nargs="*",
        help="number of lowered operators (several: one module each, then the exponents)",
    )
    p.add_argument(
        "--module",
        metavar="FILE",
        help="profile a function of this module instead: a TVMScript file of the kill "
        "pass's input (e.g. your pipeline's module just before KillAfterLastUse) "
        "(default: none, profile FAMILY's modules)",
    )
    p.add_argument(
        "--lower",
        action="store_true",
        help="--module holds a high-level module: lower it first with TVM's default "
        "pipeline up to its kill step (the form relax.build gives the pass)",
    )
    p.add_argument(
        "--func",
        dest="function",
        metavar="NAME",
        default="main",
        help="the Relax function of --module to profile",
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
    from benchkill.inputs.families import count_bindings
    from benchkill.passes.profile import profile_function

    points: list[tuple[int, dict[str, float]]] = []  # (bindings, seconds by timing)
    for label, mod in _modules(args):
        bindings = count_bindings(mod)
        profile = profile_function(mod["main"], bindings, repeats=args.repeats)
        steps = profile.per_binding_us()
        print(
            f"{label}, {bindings} bindings, CPU microseconds per binding (min of {args.repeats}):"
        )
        for step, us in steps.items():
            print(f"  {step:13s} {us:7.2f}")
        print(f"  {'total':13s} {sum(steps.values()):7.2f}")
        seconds = {"steps total": sum(profile.seconds.values())}
        if args.floor:
            seconds.update(_print_floor(mod, bindings, args.repeats))
        points.append((bindings, seconds))
        del mod
    exponents = scaling_exponents(points)
    if exponents:
        sizes = sorted({b for b, _ in points})
        print(
            f"scaling exponents, {sizes[0]:,} to {sizes[-1]:,} bindings: "
            + ", ".join(f"{name} {slope:.3f}" for name, slope in exponents.items())
        )
    return 0


def _modules(args: argparse.Namespace) -> Iterator[tuple[str, tvm.IRModule]]:
    """(label, module) of each module to profile, made one at a time; the function to
    profile is the module's ``main``, its only Relax function."""
    if args.module is not None:
        if args.family is not None or args.n_ops:
            raise BenchkillError("profile: give FAMILY N ... or --module FILE, not both")
        from benchkill.relax.text import read_module

        mod = read_module(args.module)
        if args.lower:
            mod = _lowered(mod, args.module)
        yield (
            f"{args.module}, function {args.function}",
            only_function(mod, args.function, args.module),
        )
        return
    if args.lower:
        raise BenchkillError(
            "profile: --lower needs --module FILE (generated modules are lowered already)"
        )
    if args.family is None or not args.n_ops:
        raise BenchkillError("profile: give FAMILY and at least one N, or --module FILE")
    from benchkill.inputs.families import generate

    for n_ops in args.n_ops:
        yield args.family, generate(args.family, n_ops, args.seed)


def _lowered(mod: tvm.IRModule, where: object) -> tvm.IRModule:
    from benchkill.relax.lowering import lower_to_kill_input

    try:
        return lower_to_kill_input(mod)
    except RuntimeError as exc:  # every TVM error is a RuntimeError
        raise BenchkillError(f"cannot lower {where}: {one_line(exc)}") from None


def only_function(mod: tvm.IRModule, name: str, where: object) -> tvm.IRModule:
    """``mod`` with one Relax function, ``name``, as ``main`` (what is profiled: both
    passes then transform it alone), and every function of another kind (the kernels)."""
    import tvm
    from tvm import relax

    relax_functions = {
        gv.name_hint: func for gv, func in mod.functions_items() if isinstance(func, relax.Function)
    }
    if name not in relax_functions:
        have = ", ".join(sorted(relax_functions)) or "none"
        raise BenchkillError(f"{where} has no Relax function {name!r} (it has: {have})")
    functions = {
        gv: func for gv, func in mod.functions_items() if not isinstance(func, relax.Function)
    }
    if name == "main":
        functions[mod.get_global_var("main")] = relax_functions["main"]
        return tvm.IRModule(functions, attrs=mod.attrs)
    if "main" in {gv.name_hint for gv in functions}:
        raise BenchkillError(f"{where}: a function that is not Relax is named 'main'")
    out = tvm.IRModule(functions, attrs=mod.attrs)
    out["main"] = relax_functions[name]
    return out


def scaling_exponents(points: list[tuple[int, dict[str, float]]]) -> dict[str, float]:
    """Slope of log seconds against log bindings of each timing measured at every size
    (:func:`benchkill.stats.loglog_slope`); empty with fewer than two distinct sizes."""
    from benchkill.stats import loglog_slope

    if len({bindings for bindings, _ in points}) < 2:
        return {}
    names = [name for name in points[0][1] if all(name in seconds for _, seconds in points)]
    return {
        name: loglog_slope([b for b, _ in points], [s[name] for _, s in points])[0]
        for name in names
    }


def _print_floor(mod, bindings: int, rounds: int) -> dict[str, float]:
    from benchkill.bench.suites.pass_suite import time_floor
    from benchkill.passes.canonicalize import Unsupported
    from benchkill.passes.last_use import NeedsTVMCanonicalization
    from benchkill.passes.profile import floor_work

    try:
        work = floor_work(mod["main"])
    except (NeedsTVMCanonicalization, Unsupported):
        print("floor: not measured (the function goes to the fallback, TVM's pass)")
        return {}
    best = time_floor(mod, work, rounds)
    print(
        f"floor: {work.trivial} bindings removed by canonicalization, {len(work.rebuilt)} "
        f"calls re-inferred, {len(work.kills)} kills; CPU time, min of {rounds} "
        "interleaved rounds:"
    )
    for name, seconds in best.items():
        print(f"  {name:13s} {seconds * 1e3:9.3f} ms {seconds / bindings * 1e6:7.2f} us/binding")
    tvm, ours, floor, visit = best["tvm"], best["benchkill"], best["floor"], best["visit"]
    print(
        f"  benchkill / tvm {ours / tvm:.3f}, floor / tvm {floor / tvm:.3f}, "
        f"benchkill / floor {ours / floor:.2f}, benchkill / visit {ours / visit:.1f}"
    )
    return best
