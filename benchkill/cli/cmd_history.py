"""``benchkill history FILE|DIR...``: change points per measurement over a history of runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.errors import BenchkillError

#: What exit code 1 means here.
BAD_ANSWER = "the newest level of a measurement is a regression the policy does not acknowledge"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Find where each measurement's level changed over a history of runs of one machine: "
        "the runs in commit order (the git graph of --repo when the runs' commits are in "
        "it, else their start times), one value per commit (the median of its runs' "
        "medians); instruction counts are exact (any change is a change point), times and "
        "bytes go through asv's step detection (asv.step_detect, an L1 Potts fit) and a "
        "level change must pass the case's threshold.  One line per change point: case, "
        "metric, the commit where the new level starts, before -> after, factor, verdict."
    )
    p.epilog = (
        "examples:\n"
        "  benchkill history results/<machine>/\n"
        "  benchkill history results/<machine>/ --plot figures  # figures, changes marked\n"
        "  benchkill history a.json b.json c.json --repo . --only pass_instructions"
    )
    p.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="FILE|DIR",
        help="results files, or directories whose *.json files (recursively) are results",
    )
    p.add_argument(
        "--repo",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="git checkout whose graph orders the commits (none found: start times)",
    )
    p.add_argument(
        "--machine", metavar="NAME", help="the machine whose runs to use (default: the only one)"
    )
    p.add_argument(
        "--only",
        metavar="REGEX",
        type=types.regex,
        help="only measurements whose 'suite:name[params] metric' matches (default: all)",
    )
    p.add_argument("--json", action="store_true", help="print the change points as JSON")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="DIR",
        help="also draw the history figures, change points marked, into DIR (PNG and SVG) "
        "(default: no figures)",
    )
    common.add_policy(p)


def expand(paths: list[Path]) -> list[Path]:
    """Files as given, directories as their ``*.json`` files (recursively, sorted)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not found:
                raise BenchkillError(f"{path}: no *.json results file in this directory")
            out += found
        elif path.exists():
            out.append(path)
        else:
            raise BenchkillError(f"{path}: no such file or directory")
    return list(dict.fromkeys(out))


def _one_machine(runs: list, wanted: str | None) -> list:
    names = sorted({r.machine.name for _, r in runs})
    if wanted is not None:
        chosen = [(p, r) for p, r in runs if r.machine.name == wanted]
        if not chosen:
            raise BenchkillError(
                f"--machine {wanted!r}: no run of it (machines: {', '.join(names)})"
            )
        return chosen
    if len(names) > 1:
        raise BenchkillError(
            f"runs of {len(names)} machines ({', '.join(names)}): a history is one "
            "machine's; choose one with --machine"
        )
    return runs


def run(args: argparse.Namespace) -> int:
    from benchkill.bench.git import commit_order, repo_root
    from benchkill.reporting.changepoints import find_changes
    from benchkill.reporting.formatting import format_value
    from benchkill.results.loading import load_any

    runs = [(p, load_any(p)) for p in expand(args.paths)]
    runs = _one_machine(runs, args.machine)
    if args.only is not None:
        from dataclasses import replace

        runs = [
            (p, replace(r, records=tuple(x for x in r.records if args.only.search(_label(x)))))
            for p, r in runs
        ]
    root = repo_root(args.repo) if args.repo.is_dir() else None
    graph = commit_order(root) if root is not None else None
    history = find_changes(runs, graph, common.policy_of(args))
    full = {sha[:7]: sha for sha in graph or ()}

    def commit(text: str) -> str:
        return full.get(text[:7], text) if len(text) < 40 else text

    if args.json:
        print(
            json.dumps(
                {
                    "order": history.order,
                    "commits": [commit(c) for c in history.commits],
                    "measurements": history.series,
                    "change_points": [
                        {
                            "case": c.case,
                            "metric": c.metric,
                            "commit": commit(c.commit),
                            "before": c.before,
                            "after": c.after,
                            "factor": None if c.factor == float("inf") else c.factor,
                            "verdict": c.verdict,
                            "exact": c.exact,
                            "reason": c.reason,
                        }
                        for c in history.changes
                    ],
                    "failing": len(history.failing),
                },
                indent=1,
            )
        )
    else:
        for c in history.changes:
            note = f" ({c.reason})" if c.reason else ""
            print(
                f"{c.case} {c.metric} {commit(c.commit)} "
                f"{format_value(c.before, c.unit)} -> {format_value(c.after, c.unit)} "
                f"x{c.factor:.4f} {c.verdict}{note}"
            )
        print(
            f"{len(history.changes)} change point(s) in {history.series} measurement(s) over "
            f"{len(history.commits)} commit(s), ordered by {history.order}; "
            f"{len(history.failing)} newest level(s) a regression"
        )
    if args.plot is not None:
        from benchkill.reporting.changepoints import order_runs
        from benchkill.reporting.plot_history import history as draw

        ordered, _ = order_runs(runs, graph)
        for figure in draw([r for _, r in ordered], args.plot, history.changes):
            for path in figure.paths:
                print(f"wrote {path}")
    return history.exit_code


def _label(record) -> str:
    from benchkill.bench.model import label

    return label(record.suite, record.name, record.params, record.metric)
