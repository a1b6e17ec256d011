"""``--shard K/N``: one of N jobs of a CI matrix runs its share of the work.

A shard takes every N-th item of a fixed order, starting at the K-th (round robin), so
each shard gets cases of every family and size rather than a block of the largest ones.
``benchkill run`` shards each suite's cases (:class:`ShardedSuite`) and records
``--shard K/N`` in the results file's command, so ``--resume`` keeps it and ``benchkill
merge`` (:mod:`benchkill.results.merging`) can check the shards it joins; ``fuzz`` splits
its examples and seeds, ``equivalence`` its files.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TypeVar

from benchkill.errors import BenchkillError

T = TypeVar("T")
FLAG = "--shard"


def shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (k, n) with 1 <= k <= n (an argparse ``type=``)."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, e.g. 2/4")
    k_, n_ = int(k), int(n)
    if not 1 <= k_ <= n_ or n_ > 10_000:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be in 1..N (N at most 10,000)")
    return k_, n_


def text(spec: tuple[int, int]) -> str:
    return f"{spec[0]}/{spec[1]}"


def select(items: Sequence[T], spec: tuple[int, int] | None) -> list[T]:
    """The items of shard ``spec`` (None: all): every N-th, from the K-th."""
    if spec is None:
        return list(items)
    k, n = spec
    return [item for i, item in enumerate(items) if i % n == k - 1]


def share(total: int, spec: tuple[int, int] | None) -> int:
    """How many of ``total`` repeats shard ``spec`` runs (the shares add up to total)."""
    if spec is None:
        return total
    k, n = spec
    return len(range(k - 1, total, n))


def from_command(command: Sequence[str]) -> tuple[int, int] | None:
    """The ``--shard K/N`` a results file's command recorded, or None."""
    for i, word in enumerate(command):
        value = command[i + 1] if word == FLAG and i + 1 < len(command) else None
        if word.startswith(FLAG + "="):
            value = word.split("=", 1)[1]
        if value is not None:
            try:
                return shard(value)
            except argparse.ArgumentTypeError as exc:
                raise BenchkillError(f"the run's command has a bad --shard: {exc}") from None
    return None


def without_shard(command: Sequence[str]) -> tuple[str, ...]:
    """``command`` without its ``--shard K/N`` (the command of the merged run)."""
    out: list[str] = []
    skip = False
    for word in command:
        if skip:
            skip = False
        elif word == FLAG:
            skip = True
        elif not word.startswith(FLAG + "="):
            out.append(word)
    return tuple(out)


class ShardedSuite:
    """A suite whose ``cases`` are only shard ``spec``'s; everything else is the suite's."""

    def __init__(self, suite: Any, spec: tuple[int, int]) -> None:
        self.suite = suite
        self.spec = spec
        self.NAME = suite.NAME

    def cases(self, quick: bool) -> list[Any]:
        return select(list(self.suite.cases(quick)), self.spec)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.suite, name)


def flag(spec: tuple[int, int] | None) -> tuple[str, ...]:
    """The words a results file's command records for shard ``spec``."""
    return () if spec is None else (FLAG, text(spec))


def sharded(suites: Sequence[Any], settings: Any, args: Any) -> list[Any]:
    """``suites`` sharded as the run's ``settings.command`` says (unchanged without a
    shard); a resumed run (``args.resume``) given another ``--shard`` is refused."""
    spec = from_command(settings.command)
    asked = getattr(args, "shard", None)
    if getattr(args, "resume", None) is not None and asked is not None and asked != spec:
        raise BenchkillError(f"{args.resume}: was not run with --shard {text(asked)}")
    return list(suites) if spec is None else [ShardedSuite(s, spec) for s in suites]
