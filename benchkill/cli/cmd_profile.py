"""``benchkill profile FILE`` (or ``--generate FAMILY N ...``, or a model: ``--model``,
``--torch``, ``--onnx``, lowered to the kill step's input): CPU time per binding of each
step of benchkill's pass."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.cli import deprecation
from benchkill.errors import BenchkillError, one_line
from benchkill.vocabulary import FAMILIES

if TYPE_CHECKING:
    import tvm


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read a lowered module (or generate FAMILY with N ops, --generate) and print the "
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
        "  benchkill profile --generate chain 10000\n"
        "  benchkill profile --generate model 49 --floor --repeats 15\n"
        "  benchkill profile --generate chain 1000 10000 66667 200000 --floor --repeats 3\n"
        "  benchkill profile kill_input.py --func main --floor   # your own IR\n"
        "  benchkill profile model.py --lower --floor   # high-level IR\n"
        "  benchkill profile --torch mypkg.models:resnet --dynamic x:0   # a model"
    )
    source = common.module_source(
        p,
        "a TVMScript file of the kill pass's input (e.g. your pipeline's module just before "
        "KillAfterLastUse; --lower: a high-level module)",
        old="--module",
    )
    common.add_generate(source, several=True)
    common.add_models(p, source)
    # the old form `profile FAMILY N ...`: FAMILY lands in file, the sizes here
    p.add_argument(
        "old_sizes", nargs="*", type=types.positive_int, metavar="N", help=argparse.SUPPRESS
    )
    p.add_argument(
        "--lower",
        action="store_true",
        help="FILE holds a high-level module: lower it first with TVM's default pipeline up "
        "to its kill step (the form relax.build gives the pass)",
    )
    common.add_func(p, "to profile")
    common.add_seed(p, "random seed of --generate")
    common.add_repeats(p, 3, "runs of each step; the minimum is printed")
    p.add_argument(
        "--floor",
        action="store_true",
        help="also time TVM's pass, benchkill's pass and the floor side by side",
    )


def _old_form(args: argparse.Namespace) -> None:
    """``profile FAMILY N ...`` (deprecated) as ``--generate FAMILY N ...``."""
    if args.old_sizes:
        deprecation.warn_deprecated("profile FAMILY N ...", "profile --generate FAMILY N ...")
        args.generate, args.file = (args.file, tuple(args.old_sizes)), None
    elif args.file in FAMILIES and not Path(args.file).exists():
        raise BenchkillError(
            f"profile: give FAMILY and at least one N: --generate {args.file} N [N ...]"
        )


def run(args: argparse.Namespace) -> int:
    from benchkill.passes.profile import profile_function
    from benchkill.relax.counting import count_bindings

    _old_form(args)
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
    from benchkill.stats import scaling_exponents

    timings: dict[str, list[tuple[int, float]]] = {}
    for bindings, seconds in points:
        for name, value in seconds.items():
            timings.setdefault(name, []).append((bindings, value))
    exponents = scaling_exponents(timings)
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
    model = common.model_of(args)
    if model is not None:
        if args.lower:
            raise BenchkillError("profile: --lower applies to FILE (a model is always lowered)")
        func = args.function or model.func
        where = f"{model.name}, function {func}"
        mod = only_function(_lowered(model.mod, model.name), func, model.name)
        del model
        yield where, mod
        return
    if args.generate is None:
        from benchkill.relax.text import read_module

        mod = read_module(args.file)
        if args.lower:
            mod = _lowered(mod, args.file)
        func = args.function or "main"
        yield f"{args.file}, function {func}", only_function(mod, func, args.file)
        return
    if args.lower:
        raise BenchkillError(
            "profile: --lower needs a FILE (generated modules are lowered already)"
        )
    if args.function is not None:
        raise BenchkillError("profile: --func applies to FILE, not to --generate")
    from benchkill.inputs.families import generate

    family, sizes = args.generate
    for n_ops in sizes:
        yield family, generate(family, n_ops, args.seed)


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
