"""Old spellings of options, kept one release as hidden aliases.

An old spelling still works, prints one line on stderr saying what to use instead
(``benchkill: warning: --variant is deprecated; use --kill``) and is left out of
``--help`` and the CLI reference, which show one spelling per concept.  The old
spellings of this release: ``apply --variant`` (``--kill``), ``memory --runs``
(``--repeats``) and ``--full`` (the default now), ``profile FAMILY N ...`` (``--generate
FAMILY N ...``) and ``--module FILE`` (``FILE``), ``trust --trials`` (``--repeats``),
``--slowdown`` (``--hook``) and ``--dir`` (``--out``), ``fuzz --examples``
(``--repeats``), ``equivalence --diffs`` (``--out``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def warn_deprecated(old: str, new: str) -> None:
    """The one line an old spelling prints on stderr (it still works this release)."""
    print(f"benchkill: warning: {old} is deprecated; use {new}", file=sys.stderr)


class _Alias(argparse.Action):
    """A hidden old spelling of ``target``: warns, then does what ``target`` does."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        target: argparse.Action,
        use: str,
        nargs: Any = None,
        default: Any = None,  # argparse passes the parser's default of dest; never used
    ) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=nargs,
            const=target.const,
            default=argparse.SUPPRESS,
            type=target.type,
            choices=target.choices,
            metavar=target.metavar,
            help=argparse.SUPPRESS,
        )
        self.target, self.use = target, use

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        warn_deprecated(option or self.option_strings[0], self.use)
        self.target(parser, namespace, values, (self.target.option_strings or [None])[0])


def alias(
    container: Any, target: argparse.Action, old: str, use: str | None = None
) -> argparse.Action:
    """Accept ``old`` as a hidden, deprecated spelling of ``target`` (added to
    ``container``: the parser, or the mutually exclusive group ``target`` is in)."""
    nargs = target.nargs
    if not target.option_strings:  # an option standing for a positional: one value
        nargs = None
    use = use or (target.option_strings[0] if target.option_strings else target.dest.upper())
    return container.add_argument(
        old, action=_Alias, dest=target.dest, target=target, use=use, nargs=nargs
    )


class _OldFlag(argparse._StoreConstAction):  # noqa: SLF001
    """A hidden old flag: warns, then stores ``const`` in ``dest``."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, const: Any, use: str, default: Any = None
    ) -> None:
        super().__init__(option_strings, dest, const, argparse.SUPPRESS, help=argparse.SUPPRESS)
        self.use = use

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        warn_deprecated(option or self.option_strings[0], self.use)
        super().__call__(parser, namespace, values, option)


def old_flag(container: Any, old: str, dest: str, value: Any, use: str) -> argparse.Action:
    """Accept the flag ``old`` as a hidden, deprecated way to set ``dest`` to ``value``."""
    return container.add_argument(old, action=_OldFlag, dest=dest, const=value, use=use)
