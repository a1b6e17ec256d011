"""``benchkill generate``: print a generated module as TVMScript."""

from __future__ import annotations

import argparse
import sys
import textwrap

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.vocabulary import FAMILIES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Print the module benchkill.generate(FAMILY, N, seed) as TVMScript, in the lowered "
        "form KillAfterLastUse sees (the pass benchmark's input; the other commands take "
        "it as --generate FAMILY N)."
    )
    families = "\n".join(
        textwrap.fill(f"{name}: {text}", 78, initial_indent="  ", subsequent_indent="      ")
        for name, text in FAMILIES.items()
    )
    p.epilog = (
        f"families:\n{families}\n\n"
        "example:\n  benchkill generate chain 1000 > chain.py   # then: benchkill apply chain.py"
    )
    p.add_argument("family", metavar="FAMILY", help=f"one of {', '.join(FAMILIES)}")
    p.add_argument(
        "n_ops",
        metavar="N",
        type=types.positive_int,
        help="number of lowered operators (about 3 bindings each in chain; model: layers)",
    )
    common.add_seed(p)
    p.add_argument(
        "--count", action="store_true", help="print only the number of Relax bindings of main"
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.inputs.families import generate
    from benchkill.relax.counting import count_bindings

    mod = generate(args.family, args.n_ops, seed=args.seed)
    if args.count:
        print(count_bindings(mod))
    else:
        sys.stdout.write(mod.script())
        sys.stdout.write("\n")
    return 0
