"""``benchkill generate``: print a generated module as TVMScript."""

from __future__ import annotations

import argparse
import sys

from benchkill.inputs.families import FAMILIES, count_bindings, generate


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    families = "; ".join(f"{name}: {text}" for name, text in FAMILIES.items())
    p = subparsers.add_parser(
        "generate",
        help="print a generated Relax module (the pass benchmark's input) as TVMScript",
        description="Print the module benchkill.generate(FAMILY, N, seed) as TVMScript, in the "
        f"lowered form KillAfterLastUse sees.  Families: {families}.",
    )
    p.add_argument("family", metavar="FAMILY", help=f"one of {', '.join(FAMILIES)}")
    p.add_argument("n_ops", metavar="N", type=int, help="number of lowered operators")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--count", action="store_true", help="print only the number of Relax bindings")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    mod = generate(args.family, args.n_ops, seed=args.seed)
    if args.count:
        print(count_bindings(mod))
    else:
        sys.stdout.write(mod.script())
        sys.stdout.write("\n")
    return 0
