"""``benchkill merge SHARD... --out FILE``: join the results files of one run's shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchkill.cli import common_args as common
from benchkill.errors import BenchkillError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Join the results files of the shards of one run (benchkill run --shard K/N on each "
        "job of a CI matrix) into one results file.  Shards of another commit, CPU model "
        "or interpreter build, of other suites, or sharing a case are refused; --out must "
        "not exist (nothing is overwritten).  Missing shards are named in a warning."
    )
    p.epilog = (
        "example:\n"
        "  benchkill run --suite pass --instructions-only --shard 1/2 --out s1.json\n"
        "  benchkill run --suite pass --instructions-only --shard 2/2 --out s2.json\n"
        "  benchkill merge s1.json s2.json --out run.json"
    )
    p.add_argument("shards", nargs="+", type=Path, metavar="SHARD", help="shard results files")
    common.add_out(
        p,
        "FILE",
        "the merged results file to create, which must not exist (default: none; required)",
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.cli.outputs import check_new_file, shown
    from benchkill.results.merging import merge
    from benchkill.results.store import load, save

    if args.out is None:
        raise BenchkillError("--out FILE is required: the merged file to create")
    from benchkill.bench.sharding import from_command, without_shard

    paths = list(dict.fromkeys(args.shards))
    runs = [(p, load(p)) for p in paths]
    shards = [
        (p, r, from_command(r.settings.command), without_shard(r.settings.command)) for p, r in runs
    ]
    check_new_file(args.out)
    merged, missing = merge(shards)
    if missing:
        print(
            f"benchkill: warning: shards {', '.join(map(str, missing))} of "
            f"{len(missing) + len(shards)} are missing; the merged run is incomplete",
            file=sys.stderr,
        )
    save(merged, args.out, exclusive=True)
    print(
        f"wrote {shown(args.out)} ({len(merged.cases)} cases, {len(merged.records)} records "
        f"from {len(shards)} shards)"
    )
    return 0
