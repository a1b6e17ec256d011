"""``benchkill verify FILE``: check the kills of a lowered module (exit 1 on a violation)."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchkill.analysis.verifier import RULES  # imports TVM: only for this command

    p.description = (
        "Check every kill of a module: no kill of a register-less value, no use after a "
        "kill, no double kill, no kill of an output or parameter.  Exit 0 when clean, 1 on "
        "a violation, 2 when the file cannot be read.  Rules: "
        + "; ".join(f"{name}: {text}" for name, text in RULES.items())
    )
    p.add_argument("file", help="TVMScript file (.py)")
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
