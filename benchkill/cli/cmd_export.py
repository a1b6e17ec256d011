"""``benchkill export FILE|DIR... --out DIR``: benchkill results as asv results, for
``asv publish``'s dashboard."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write benchkill results files as asv results (benchmarks.json, each machine's "
        "machine.json and one results file per run and commit) under DIR, so that "
        "`asv publish` draws benchkill's metrics, instruction counts included, with asv's "
        "graphs and regressions page; several machines' runs go into one dashboard.  Each "
        "run's commit is resolved to its full sha in --repo.  No existing results file is "
        "overwritten; benchmarks.json gains the exported benchmarks."
    )
    p.epilog = (
        "example (an asv.conf.json whose results_dir is .asv/benchkill-results):\n"
        "  benchkill export results/ --out .asv/benchkill-results\n"
        "  asv publish && asv preview"
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR", help="results files")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="the asv results directory (default: none; required)",
    )
    p.add_argument(
        "--repo",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="git checkout holding the runs' commits",
    )


def run(args: argparse.Namespace) -> int:
    from benchkill.bench import git
    from benchkill.cli.cmd_history import expand
    from benchkill.errors import BenchkillError
    from benchkill.results.asv_export import export
    from benchkill.results.store import load

    repo = git.require_repo(args.repo)
    runs = [load(p) for p in expand(args.paths)]
    if args.out.exists() and not args.out.is_dir():
        raise BenchkillError(f"--out {args.out}: not a directory")

    def full_sha(short: str) -> str | None:
        try:
            return git.resolve(repo, short) if short else None
        except BenchkillError:
            return None

    def commit_date(sha: str) -> int:
        return int(git.git(repo, "log", "-1", "--format=%ct", sha)) * 1000

    written = export(runs, args.out, full_sha, commit_date)
    for path in written:
        print(f"wrote {path}")
    return 0
