"""``benchkill generate``: print a generated module as TVMScript."""

from __future__ import annotations

import argparse
import sys

from benchkill.cli import args as types


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchkill.inputs.families import FAMILIES  # imports TVM: only for this command

    families = "; ".join(f"{name}: {text}" for name, text in FAMILIES.items())
    p.description = (
        "Print the module benchkill.generate(FAMILY, N, seed) as TVMScript, in the lowered "
        f"form KillAfterLastUse sees.  Families: {families}."
    )
    p.add_argument("family", metavar="FAMILY", help=f"one of {', '.join(FAMILIES)}")
    p.add_argument(
        "n_ops", metavar="N", type=types.positive_int, help="number of lowered operators"
    )
    p.add_argument("--seed", type=types.non_negative_int, default=0, help="random seed (default 0)")
    p.add_argument("--count", action="store_true", help="print only the number of Relax bindings")


def run(args: argparse.Namespace) -> int:
    from benchkill.inputs.families import count_bindings, generate

    mod = generate(args.family, args.n_ops, seed=args.seed)
    if args.count:
        print(count_bindings(mod))
    else:
        sys.stdout.write(mod.script())
        sys.stdout.write("\n")
    return 0
