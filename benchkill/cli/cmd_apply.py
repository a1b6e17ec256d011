"""``benchkill apply``: run a KillAfterLastUse variant on a module and print the result."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import tvm

from benchkill.errors import BenchkillError
from benchkill.execution.pipeline import kill_pass

VARIANTS = ("benchkill", "tvm", "beyond", "legacy")
KILL_OPS = ("relax.memory.kill_tensor", "relax.memory.kill_storage", "relax.vm.kill_object")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "apply",
        help="apply a KillAfterLastUse variant to a module file or a generated module",
        description="Apply KillAfterLastUse to a lowered module (TVMScript or tvm.ir.save_json "
        "JSON file, or --generate FAMILY N) and print the result as TVMScript; a summary "
        "line (kills inserted, pass time) goes to stderr.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", help="TVMScript or JSON file")
    source.add_argument(
        "--generate", nargs=2, metavar=("FAMILY", "N_OPS"), help="use benchkill.generate"
    )
    p.add_argument("--variant", choices=VARIANTS, default="benchkill", help="which pass")
    p.add_argument(
        "--out",
        help="write the TVMScript here instead of printing it (tvm.ir.save_json crashes on "
        "Relax functions in apache-tvm 0.27, so no JSON is written)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    p.set_defaults(func=run)


def _module(args: argparse.Namespace) -> tvm.IRModule:
    if args.generate:
        from benchkill.inputs.families import generate

        family, n_ops = args.generate
        try:
            n = int(n_ops)
        except ValueError:
            raise BenchkillError(f"N_OPS must be a whole number, got {n_ops!r}") from None
        return generate(family, n)
    from benchkill.relax.text import read_module

    return read_module(args.file)


def count_kills(mod: tvm.IRModule) -> dict[str, int]:
    """How many calls of each kill operator ``mod``'s printed form holds."""
    text = mod.script(show_meta=False)
    return {op.rsplit(".", 1)[-1]: text.count(op.replace("relax.", "R.") + "(") for op in KILL_OPS}


def run(args: argparse.Namespace) -> int:
    mod = _module(args)
    before = count_kills(mod)
    start = time.perf_counter()
    try:
        after = kill_pass(args.variant)(mod)
    except BenchkillError:
        raise
    except tvm.error.TVMError as exc:
        raise BenchkillError(f"the pass rejected the module: {str(exc).splitlines()[0]}") from None
    seconds = time.perf_counter() - start
    added = {k: v - before[k] for k, v in count_kills(after).items()}
    if args.out:
        path = Path(args.out)
        try:
            path.write_text(after.script())
        except OSError as exc:
            raise BenchkillError(f"cannot write {path}: {exc.strerror or exc}") from None
    elif not args.quiet:
        print(after.script())
    summary = ", ".join(f"{n} {k}" for k, n in added.items())
    print(f"{args.variant}: inserted {summary} in {seconds:.3f} s", file=sys.stderr)
    return 0
