"""``benchkill bisect GOOD BAD``: the commit that made a regression, each commit measured
with its own code in a temporary git worktree."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchkill import vocabulary
from benchkill.cli import args as types
from benchkill.errors import BenchkillError, ExitCode

#: What exit code 1 means here.
BAD_ANSWER = "the range holds no regression (BAD measures like GOOD)"
#: What exit code 3 means here.
NOT_MEASURED = "GOOD could not be measured, or skipped commits leave several candidates (listed)"
DEFAULT_CASES = (("chain", 300),)


def case(text: str) -> tuple[str, int]:
    """``FAMILY:BINDINGS`` -> (family, bindings)."""
    family, _, n = text.partition(":")
    if family not in vocabulary.FAMILIES or family == vocabulary.MODEL_FAMILY:
        known = ", ".join(f for f in vocabulary.FAMILIES if f != vocabulary.MODEL_FAMILY)
        raise argparse.ArgumentTypeError(f"{text!r}: FAMILY is one of {known}")
    if not n.isdigit() or not 1 <= int(n) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r}: BINDINGS must be an integer in [1, 10^6]")
    return family, int(n)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Find the first commit between GOOD and BAD whose pass is worse than GOOD's.  Each "
        "tested commit is checked out in a temporary git worktree (your checkout, index "
        "and branches are untouched; the worktrees are removed after, also on Ctrl-C) and "
        "measured by a child process running that commit's own benchkill.  Instruction "
        "counts are exact, so one measurement per commit: a commit is bad when a case's "
        "count exceeds GOOD's (times --factor).  Times use repeats and the Mann-Whitney U "
        "test.  A commit that fails to run is skipped, as git bisect skip does.  At most "
        "ceil(log2 N) + 1 commits are measured for N commits from GOOD to BAD."
    )
    p.epilog = (
        "output: one line per tested commit (sha, good/bad/skip, the values), then\n"
        "  first bad commit: <full sha>\n\n"
        "examples:\n"
        "  benchkill bisect v0.1.0 HEAD\n"
        "  benchkill bisect HEAD~16 HEAD --case chain:300 --case mixed:300"
    )
    p.add_argument("good", metavar="GOOD", help="a revision without the regression")
    p.add_argument("bad", metavar="BAD", help="a later revision with it (GOOD its ancestor)")
    p.add_argument(
        "--case",
        dest="cases",
        action="append",
        type=case,
        metavar="FAMILY:BINDINGS",
        help="generated module(s) to apply the pass to, repeatable (default: chain:300)",
    )
    p.add_argument(
        "--metric",
        choices=("instructions", "time"),
        default="instructions",
        help="instructions under valgrind (exact) or CPU time (repeats, U test)",
    )
    p.add_argument(
        "--repo", type=Path, default=Path(), metavar="DIR", help="the git checkout to bisect"
    )
    p.add_argument(
        "--factor",
        type=types.factor,
        metavar="F",
        help="ratio to GOOD that counts as bad (default: 1 for instructions, 1.1 for time)",
    )
    p.add_argument(
        "--alpha",
        type=types.alpha,
        default=0.01,
        metavar="A",
        help="significance level of the U test (time)",
    )
    p.add_argument(
        "--timeout",
        type=types.timeout_seconds,
        default=1800.0,
        metavar="SECONDS",
        help="seconds one commit's measurement may take before it is skipped",
    )


def _values(values: dict[str, list[float]], metric: str) -> str:
    if metric == "instructions":
        return " ".join(f"{k}={int(v[0]):,}" for k, v in values.items())
    return " ".join(f"{k}={sorted(v)[len(v) // 2] * 1e3:.3g}ms" for k, v in values.items())


def run(args: argparse.Namespace) -> int:
    from benchkill.bench import bisect as bisection
    from benchkill.bench import git

    if not args.repo.is_dir():
        raise BenchkillError(f"--repo {args.repo}: not a directory")
    repo = git.require_repo(args.repo)
    good, bad = git.resolve(repo, args.good), git.resolve(repo, args.bad)
    if good == bad:
        raise BenchkillError(f"GOOD and BAD are the same commit ({good})")
    if not git.is_ancestor(repo, good, bad):
        raise BenchkillError(f"GOOD {args.good} is not an ancestor of BAD {args.bad}")
    commits = [good, *git.path_between(repo, good, bad)]
    if args.metric == "instructions":
        from benchkill.bench.instructions import find_instrument

        find_instrument()  # valgrind missing: one line, exit 2, before any checkout
    cases = tuple(dict.fromkeys(args.cases or DEFAULT_CASES))
    print(
        f"bisecting {len(commits)} commits ({good[:12]}..{bad[:12]}), {args.metric} of "
        f"{', '.join(f'{f}:{n}' for f, n in cases)}; at most "
        f"{bisection.measured_at_most(len(commits))} measured",
        flush=True,
    )

    def measure(commit: str):
        with git.temporary_worktree(repo, commit) as tree:
            return bisection.measure(tree, cases, args.metric, args.timeout)

    def report(t) -> None:
        what = f"({t.reason})" if t.verdict == bisection.SKIP else _values(t.values, args.metric)
        print(f"{t.commit} {t.verdict} {what}", flush=True)

    outcome = bisection.bisect(
        commits,
        measure,
        lambda base, new: bisection.is_bad(base, new, args.metric, args.factor, args.alpha),
        report,
    )
    if outcome.candidates:
        print("skipped commits leave several candidates for the first bad commit:")
        for c in outcome.candidates:
            print(f"  {c}")
        return ExitCode.NOT_MEASURED
    if outcome.first_bad is None:
        print(f"no regression: every measured commit up to {bad} is as good as GOOD")
        return ExitCode.BAD_ANSWER
    print(f"first bad commit: {outcome.first_bad}")
    return ExitCode.OK
