"""Find the commit that made a regression: each tested commit measured with its own code.

:func:`bisect` measures GOOD first (the baseline), then halves the commits after it up
to BAD, oldest first along the ancestry path, as ``git bisect`` does, with one twist
that keeps the count of measurements down: BAD is not assumed bad.  With N commits
from GOOD to BAD (both included) the first bad commit is one of the N - 1 after GOOD,
or there is none: N outcomes, told apart by at most ceil(log2 N) measurements besides
GOOD's.  A commit that cannot be measured (its code fails to import or run) is
skipped as ``git bisect skip`` does: the nearest untested commit in the remaining range
is measured instead.

Each commit is checked out in a temporary ``git worktree`` (:mod:`benchkill.bench.git`)
and measured by a child process whose ``PYTHONPATH`` is that worktree, so it runs the
commit's own benchkill:

* ``instructions``: the commit's :func:`benchkill.bench.instructions.count_cases` (one
  application of the pass after a warm-up, under callgrind): counts are exact, so one
  measurement per commit and a commit is bad when a case's count exceeds GOOD's times
  ``factor`` (default 1: any increase);
* ``time``: the CPU time of ``repeats`` applications of the commit's pass per case; a
  commit is bad when a case's median exceeds GOOD's times ``factor`` (default 1.10)
  and the Mann-Whitney U test on the samples agrees (p < ``alpha``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.stats import mann_whitney_u

RESULT_PREFIX = "BISECT_RESULT "
GOOD, BAD, SKIP = "good", "bad", "skip"
DEFAULT_FACTORS = {"instructions": 1.0, "time": 1.10}
DEFAULT_ALPHA = 0.01
TIME_REPEATS = 15

#: The child's program for instruction counts (run with the commit's code on the path).
_INSTRUCTIONS_CHILD = """
import json, sys
from benchkill.bench.instructions import count_cases
cases = json.loads(sys.argv[1])
counts = count_cases([(f, n, 0) for f, n in cases], "benchkill", 1)
out = {f"{f}:{n}": [c.counts[0]] for (f, n), c in zip(cases, counts)}
print("BISECT_RESULT " + json.dumps(out), flush=True)
"""
#: The child's program for CPU times.
_TIME_CHILD = """
import gc, json, sys, time
from benchkill.inputs.families import generate
from benchkill.passes import KillAfterLastUse
cases, repeats = json.loads(sys.argv[1]), int(sys.argv[2])
out = {}
for f, n in cases:
    mod, pass_ = generate(f, n, 0), KillAfterLastUse()
    pass_(mod)
    samples = []
    for _ in range(repeats):
        gc.collect()
        t = time.process_time()
        pass_(mod)
        samples.append(time.process_time() - t)
    out[f"{f}:{n}"] = samples
print("BISECT_RESULT " + json.dumps(out), flush=True)
"""

Values = dict[str, list[float]]


class CommitFailed(Exception):
    """The commit's code could not be measured (the reason is the message)."""


@dataclass(frozen=True)
class Tested:
    """One measured (or skipped) commit."""

    commit: str
    verdict: str  # GOOD, BAD or SKIP
    values: Values
    reason: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a bisect found: the first bad commit (None: no regression in the range, or
    ``candidates`` when skipped commits leave several)."""

    first_bad: str | None
    tested: tuple[Tested, ...]
    candidates: tuple[str, ...] = ()


def measure(tree: Path, cases: Sequence[tuple[str, int]], metric: str, timeout: float) -> Values:
    """The values of ``cases`` measured by the code checked out at ``tree``."""
    cases_arg = json.dumps([list(c) for c in cases])
    program = _INSTRUCTIONS_CHILD if metric == "instructions" else _TIME_CHILD
    argv = [sys.executable, "-c", program, cases_arg, str(TIME_REPEATS)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        done = subprocess.run(
            argv,
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise CommitFailed(f"timed out after {timeout:.0f} s") from None
    lines = [x for x in done.stdout.splitlines() if x.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise CommitFailed(tail[0][:200])
    return json.loads(lines[-1][len(RESULT_PREFIX) :])


def is_bad(good: Values, values: Values, metric: str, factor: float | None, alpha: float) -> bool:
    """Whether ``values`` are a regression against GOOD's (see the module docstring)."""
    factor = DEFAULT_FACTORS[metric] if factor is None else factor
    for case, base in good.items():
        new = values.get(case)
        if not new:
            continue
        b, n = sorted(base)[len(base) // 2], sorted(new)[len(new) // 2]
        if metric == "instructions":
            if n > b * factor:
                return True
        elif n > b * factor and mann_whitney_u(base, new).p_value < alpha:
            return True
    return False


def bisect(
    commits: Sequence[str],
    measure_commit: Callable[[str], Values],
    bad: Callable[[Values, Values], bool],
    report: Callable[[Tested], None] = lambda t: None,
) -> Outcome:
    """The first bad commit of ``commits`` (GOOD first, then each later commit up to BAD,
    oldest first); ``measure_commit`` raises :class:`CommitFailed` for a commit it cannot
    measure; ``report`` sees each tested commit as soon as it is known."""
    tested: list[Tested] = []

    def test(commit: str, baseline: Values | None) -> Tested:
        try:
            values = measure_commit(commit)
        except CommitFailed as exc:
            t = Tested(commit, SKIP, {}, str(exc))
        else:
            verdict = GOOD if baseline is None or not bad(baseline, values) else BAD
            t = Tested(commit, verdict, values)
        tested.append(t)
        report(t)
        return t

    first = test(commits[0], None)
    if first.verdict == SKIP:
        raise BenchkillError(f"GOOD {commits[0]} could not be measured: {first.reason}")
    n = len(commits)
    lo, hi = 1, n  # the first bad index is in [lo, hi]; hi == n: none
    skipped: set[int] = set()
    while lo < hi:
        mid = (lo + hi) // 2
        options = sorted(
            (i for i in range(lo, hi) if i not in skipped), key=lambda i: (abs(i - mid), i)
        )
        if not options:
            return Outcome(None, tuple(tested), tuple(commits[lo : hi + 1]))
        index = options[0]
        t = test(commits[index], first.values)
        if t.verdict == SKIP:
            skipped.add(index)
        elif t.verdict == BAD:
            hi = index
        else:
            lo = index + 1
    # lo == hi: commits[lo] was measured bad and the one before it good (or is GOOD)
    return Outcome(commits[lo] if lo < n else None, tuple(tested))


def measured_at_most(n: int) -> int:
    """The most commits :func:`bisect` measures over ``n`` commits without skips."""
    return math.ceil(math.log2(n)) + 1 if n > 1 else 1
