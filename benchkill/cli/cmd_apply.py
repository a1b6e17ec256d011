"""``benchkill apply``: run a KillAfterLastUse variant on a module and print the result."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchkill.cli import args as types
from benchkill.cli.outputs import refuse_overwrite, write_text
from benchkill.errors import BenchkillError, one_line
from benchkill.relax.ops import KILLS

if TYPE_CHECKING:
    import tvm

VARIANTS = ("benchkill", "tvm", "beyond", "legacy")


class _Generate(argparse.Action):
    """``--generate FAMILY N_OPS``: N_OPS checked as a positive whole number."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        family, n_ops = values
        try:
            n = types.positive_int(n_ops)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, f"N_OPS {exc}") from None
        setattr(namespace, self.dest, (family, n))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Apply KillAfterLastUse to a lowered Relax module (a TVMScript file, or one made by "
        "--generate FAMILY N_OPS) and print the result as TVMScript; a summary line (kills "
        "inserted, pass time) goes to stderr.  Exit 2 when the module cannot be read or the "
        "pass rejects it."
    )
    p.epilog = (
        "variants:\n"
        "  benchkill  benchkill's pass, output equal to TVM's\n"
        "  tvm        TVM's C++ pass (relax.transform.KillAfterLastUse)\n"
        "  beyond     benchkill's, also killing after an If (TVM's pass stops there)\n"
        "  legacy     benchkill's with the pre-fix bug: kills R.null_value() results\n\n"
        "example:\n"
        "  benchkill apply --generate chain 100 --variant beyond --quiet"
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "file", nargs="?", help="TVMScript file of a lowered module (e.g. from benchkill generate)"
    )
    source.add_argument(
        "--generate",
        nargs=2,
        metavar=("FAMILY", "N_OPS"),
        action=_Generate,
        help="use the module benchkill.generate(FAMILY, N_OPS) instead of a file "
        "(default: read FILE)",
    )
    p.add_argument("--variant", choices=VARIANTS, default="benchkill", help="which pass to run")
    p.add_argument(
        "--out",
        type=types.out_path,
        metavar="FILE",
        help="write the result (TVMScript) to FILE (default: print it)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary line")


def _module(args: argparse.Namespace) -> tvm.IRModule:
    if args.generate:
        from benchkill.inputs.families import generate

        family, n_ops = args.generate
        return generate(family, n_ops)
    from benchkill.relax.text import read_module

    return read_module(args.file)


def count_kills(mod: tvm.IRModule) -> dict[str, int]:
    """How many calls of each kill operator ``mod``'s printed form holds."""
    text = mod.script(show_meta=False)
    return {op.rsplit(".", 1)[-1]: text.count(op.replace("relax.", "R.") + "(") for op in KILLS}


def run(args: argparse.Namespace) -> int:
    from benchkill.execution.pipeline import kill_pass

    inputs = [Path(args.file)] if args.file else []
    if args.out is not None:
        refuse_overwrite(Path(args.out), inputs, "the module")  # before any work
    mod = _module(args)
    before = count_kills(mod)
    start = time.perf_counter()
    try:
        after = kill_pass(args.variant)(mod)
    except BenchkillError:
        raise
    except RuntimeError as exc:  # every TVM error is a RuntimeError
        raise BenchkillError(f"the pass rejected the module: {one_line(exc)}") from None
    seconds = time.perf_counter() - start
    added = {k: v - before[k] for k, v in count_kills(after).items()}
    if args.out is not None:
        write_text(Path(args.out), after.script(), inputs, "the module")
    elif not args.quiet:
        print(after.script())
    summary = ", ".join(f"{n} {k}" for k, n in added.items())
    print(f"{args.variant}: inserted {summary} in {seconds:.3f} s", file=sys.stderr)
    return 0
