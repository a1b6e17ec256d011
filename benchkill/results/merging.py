"""Join the results files of the shards of one run (``benchkill run --shard K/N``).

The shards of a CI matrix run on different runners, so their host names differ; what
must not differ is what the figures depend on: the commit of the code (the machine's and
every record's), the CPU model, and the interpreter's release and build.  Shards that
differ in any of them, that ran other suites or sizes, that name another N, that repeat
a shard or share a case are refused with one line naming the file.  The joined run's
command is the shards' without ``--shard``; it starts at the earliest start and is
finished when every shard is.  Saving goes through :func:`benchkill.results.store.save`
with ``exclusive``: an existing file is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.results.store import Results, RunSettings

#: (what, Machine field) that every shard must share.
SAME = (
    ("commit", "git_commit"),
    ("dirty work tree", "git_dirty"),
    ("CPU model", "cpu_model"),
    ("Python", "python"),
    ("Python build", "python_build"),
)


#: A shard to merge: its file, its run, its (K, N) (None: the run had no ``--shard``) and
#: its run's command without the shard (``benchkill.bench.sharding`` reads both).
Shard = tuple[Path, Results, "tuple[int, int] | None", tuple[str, ...]]


def _check(shards: Sequence[Shard]) -> tuple[int, list[int]]:
    first_path, first, _, first_command = shards[0]
    n = None
    seen: dict[int, Path] = {}
    keys: dict[str, Path] = {}
    for path, run, spec, command in shards:
        for what, field in SAME:
            a, b = getattr(first.machine, field), getattr(run.machine, field)
            if a != b:
                raise BenchkillError(
                    f"{path}: {what} {b!r}, but {first_path} has {a!r}: shards of one run share it"
                )
        commits = {c for c, _ in run.code_states}
        if commits - {first.machine.git_commit}:
            raise BenchkillError(f"{path}: records measured at another commit {sorted(commits)}")
        s, f = run.settings, first.settings
        if (s.suites, s.quick) != (f.suites, f.quick):
            raise BenchkillError(f"{path}: other suites or sizes than {first_path}")
        if command != first_command:
            raise BenchkillError(f"{path}: run with another command than {first_path}")
        if spec is None:
            raise BenchkillError(f"{path}: not a shard (its run had no --shard K/N)")
        if n is not None and spec[1] != n:
            raise BenchkillError(f"{path}: a shard of {spec[1]}, the others of {n}")
        n = spec[1]
        if spec[0] in seen:
            raise BenchkillError(f"{path}: shard {spec[0]}/{n} again (also {seen[spec[0]]})")
        seen[spec[0]] = path
        for case in run.cases:
            if case.key in keys:
                raise BenchkillError(f"{path}: case {case.key} is also in {keys[case.key]}")
            keys[case.key] = path
    n = n or 0  # every shard has one (checked above)
    return n, sorted(set(range(1, n + 1)) - set(seen))


def merge(shards: Sequence[Shard]) -> tuple[Results, list[int]]:
    """The run the ``shards`` make together, and the shard numbers missing from them."""
    if not shards:
        raise BenchkillError("no shard to merge")
    n, missing = _check(shards)
    ordered = sorted(shards, key=lambda s: s[2] or (0, 0))
    runs = [s[1] for s in ordered]
    finished = [r.settings.finished_at for r in runs]
    settings = RunSettings(
        suites=runs[0].settings.suites,
        quick=runs[0].settings.quick,
        command=ordered[0][3],
        started_at=min(r.settings.started_at for r in runs),
        finished_at=None if None in finished or missing else max(finished),
        resumed_at=tuple(sorted(t for r in runs for t in r.settings.resumed_at)),
    )
    merged = Results(
        replace(runs[0].machine),
        settings,
        tuple(c for r in runs for c in r.cases),
        tuple(x for r in runs for x in r.records),
    )
    return merged, missing
