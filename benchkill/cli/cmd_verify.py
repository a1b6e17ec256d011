"""``benchkill verify FILE``: check the kills of a lowered module (exit 1 on a violation)."""

from __future__ import annotations

import argparse
import textwrap

from benchkill.vocabulary import KILL_RULES

#: What exit code 1 means here.
BAD_ANSWER = "a kill breaks a rule (each violation is printed)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Check every kill of a module: no kill of a register-less value, no use after a "
        "kill, no double kill, no kill of an output or parameter.  A module of 4,000 "
        "bindings takes about 10 s here, most of it reading the TVMScript."
    )
    rules = "\n".join(
        textwrap.fill(f"{name}: {text}", 78, initial_indent="  ", subsequent_indent="      ")
        for name, text in KILL_RULES.items()
    )
    p.epilog = (
        f"rules:\n{rules}\n\n"
        "example:\n"
        "  benchkill generate shape_heap 100 > heap.py\n"
        "  benchkill apply heap.py --kill legacy --out killed.py\n"
        "  benchkill verify killed.py     # legacy kills R.null_value(): exit 1"
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="TVMScript file of a lowered module (as printed by generate or apply)",
    )
    p.add_argument(
        "--expect-complete",
        action="store_true",
        help="also report tensors and storage not killed after their last use",
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.analysis.verifier import verify_kills
    from benchkill.cli.outputs import shown
    from benchkill.relax.text import read_module

    mod = read_module(args.file)
    violations = verify_kills(mod, expect_complete=args.expect_complete)
    for violation in violations:
        print(violation)
    if violations:
        print(f"{len(violations)} violation(s) in {shown(args.file)}")
        return 1
    print(f"ok: no violations in {shown(args.file)}")
    return 0
