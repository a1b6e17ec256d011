"""``benchkill apply``: run a KillAfterLastUse variant on a module and print the result."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchkill.cli import common_args as common
from benchkill.cli import deprecation
from benchkill.cli.outputs import refuse_overwrite, write_text
from benchkill.errors import BenchkillError, one_line
from benchkill.vocabulary import KILL_PASSES

if TYPE_CHECKING:
    import tvm


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Apply KillAfterLastUse to a lowered Relax module (a TVMScript file, or one made by "
        "--generate FAMILY N) and print the result as TVMScript; a summary line (kills "
        "inserted, pass time) goes to stderr."
    )
    p.epilog = (
        common.kill_epilog(KILL_PASSES) + "\n\n"
        "example:\n"
        "  benchkill apply --generate chain 100 --kill beyond --quiet"
    )
    source = common.module_source(
        p, "TVMScript file of a lowered module (e.g. from benchkill generate)"
    )
    common.add_generate(source)
    common.add_seed(p, "random seed of --generate")
    deprecation.alias(p, common.add_kill(p), "--variant")
    common.add_out(p, "FILE", "write the result (TVMScript) to FILE (default: print it)")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")


def _module(args: argparse.Namespace) -> tvm.IRModule:
    if args.generate:
        from benchkill.inputs.families import generate

        family, (n_ops,) = args.generate
        return generate(family, n_ops, args.seed)
    from benchkill.relax.text import read_module

    return read_module(args.file)


def count_kills(mod: tvm.IRModule) -> dict[str, int]:
    """How many calls of each kill operator ``mod``'s printed form holds."""
    from benchkill.relax.ops import KILLS

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
        after = kill_pass(args.kill)(mod)
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
    print(f"{args.kill}: inserted {summary} in {seconds:.3f} s", file=sys.stderr)
    return 0
