"""The git plumbing of ``history`` and ``bisect``: commit order, revisions, worktrees.

Every call runs ``git`` in a child process with ``-C REPO``; a failure that is the user's
(not a repository, an unknown revision) is a :class:`~benchkill.errors.BenchkillError`.
:func:`temporary_worktree` checks a commit out in a fresh directory with ``git worktree
add --detach`` and removes it (``git worktree remove --force``, then ``prune``) when the
block ends, however it ends: the user's checkout, index and branches are never touched.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchkill.errors import BenchkillError


def git(repo: Path, *args: str, check: bool = True) -> str:
    """``git -C repo args...``'s stdout, stripped; a failure raises BenchkillError."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise BenchkillError("git is not installed (not found on PATH)") from None
    if check and done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        raise BenchkillError(f"git {' '.join(args[:2])}: {lines[-1]}")
    return done.stdout.strip()


def repo_root(path: Path) -> Path | None:
    """The top of the git work tree holding ``path``, or None when it is in none."""
    done = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def require_repo(path: Path) -> Path:
    """:func:`repo_root` of ``path``, or a BenchkillError saying it is not a repository."""
    root = repo_root(path)
    if root is None:
        raise BenchkillError(f"{path}: not inside a git repository")
    return root


def resolve(repo: Path, rev: str) -> str:
    """The full sha of the commit ``rev`` names, or a BenchkillError naming ``rev``."""
    if rev.startswith("-"):
        raise BenchkillError(f"unknown revision {rev!r}")
    out = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if not out:
        raise BenchkillError(f"unknown revision {rev!r} in {repo}")
    return out


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    """True when commit ``old`` is an ancestor of (or is) ``new``."""
    done = subprocess.run(
        ["git", "-C", str(repo), "merge-base", "--is-ancestor", old, new],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def commit_order(repo: Path, tips: Sequence[str] = ("--all",)) -> list[str]:
    """Full shas of the commits reachable from ``tips``, oldest first, in the graph's
    topological order (``git rev-list --topo-order --reverse``)."""
    out = git(repo, "rev-list", "--topo-order", "--reverse", *tips)
    return out.split()


def path_between(repo: Path, good: str, bad: str) -> list[str]:
    """The commits after ``good`` up to ``bad`` (included), oldest first, along the
    first-parent line from ``bad`` (the commits a bisect on a linear range tests)."""
    out = git(repo, "rev-list", "--topo-order", "--reverse", "--ancestry-path", f"{good}..{bad}")
    return out.split()


def worktree_remove(repo: Path, where: Path) -> None:
    """Remove the worktree at ``where`` and prune git's record of it (errors ignored)."""
    git(repo, "worktree", "remove", "--force", str(where), check=False)
    shutil.rmtree(where, ignore_errors=True)
    git(repo, "worktree", "prune", check=False)


@contextmanager
def temporary_worktree(repo: Path, commit: str, parent: Path | None = None) -> Iterator[Path]:
    """A detached checkout of ``commit`` in a new temporary directory, removed after."""
    base = Path(tempfile.mkdtemp(prefix="benchkill-bisect-", dir=parent))
    where = base / "tree"
    try:
        git(repo, "worktree", "add", "--detach", "--quiet", str(where), commit)
        yield where
    finally:
        worktree_remove(repo, where)
        shutil.rmtree(base, ignore_errors=True)
